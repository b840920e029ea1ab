#----------------------------------------------------------------
# Generated CMake target import file for configuration "Release".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "callguard::callguard_ocaml" for configuration "Release"
set_property(TARGET callguard::callguard_ocaml APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(callguard::callguard_ocaml PROPERTIES
  IMPORTED_LINK_INTERFACE_LANGUAGES_RELEASE "C"
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libcallguard_ocaml.a"
  )

list(APPEND _cmake_import_check_targets callguard::callguard_ocaml )
list(APPEND _cmake_import_check_files_for_callguard::callguard_ocaml "${_IMPORT_PREFIX}/lib/libcallguard_ocaml.a" )

# Import target "callguard::callguard_ruby" for configuration "Release"
set_property(TARGET callguard::callguard_ruby APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(callguard::callguard_ruby PROPERTIES
  IMPORTED_LINK_INTERFACE_LANGUAGES_RELEASE "C"
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libcallguard_ruby.a"
  )

list(APPEND _cmake_import_check_targets callguard::callguard_ruby )
list(APPEND _cmake_import_check_files_for_callguard::callguard_ruby "${_IMPORT_PREFIX}/lib/libcallguard_ruby.a" )

# Import target "callguard::callguard_load" for configuration "Release"
set_property(TARGET callguard::callguard_load APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(callguard::callguard_load PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libcallguard-load.so.0.1.0"
  IMPORTED_SONAME_RELEASE "libcallguard-load.so.0"
  )

list(APPEND _cmake_import_check_targets callguard::callguard_load )
list(APPEND _cmake_import_check_files_for_callguard::callguard_load "${_IMPORT_PREFIX}/lib/libcallguard-load.so.0.1.0" )

# Import target "callguard::callguard" for configuration "Release"
set_property(TARGET callguard::callguard APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(callguard::callguard PROPERTIES
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libcallguard.so.0.1.0"
  IMPORTED_SONAME_RELEASE "libcallguard.so.0"
  )

list(APPEND _cmake_import_check_targets callguard::callguard )
list(APPEND _cmake_import_check_files_for_callguard::callguard "${_IMPORT_PREFIX}/lib/libcallguard.so.0.1.0" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
