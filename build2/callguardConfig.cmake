
####### Expanded from @PACKAGE_INIT@ by configure_package_config_file() #######
####### Any changes to this file will be overwritten by the next CMake run ####
####### The input file was callguardConfig.cmake.in                            ########

get_filename_component(PACKAGE_PREFIX_DIR "${CMAKE_CURRENT_LIST_DIR}/../../../" ABSOLUTE)

macro(set_and_check _var _file)
  set(${_var} "${_file}")
  if(NOT EXISTS "${_file}")
    message(FATAL_ERROR "File or directory ${_file} referenced by variable ${_var} does not exist !")
  endif()
endmacro()

macro(check_required_components _NAME)
  foreach(comp ${${_NAME}_FIND_COMPONENTS})
    if(NOT ${_NAME}_${comp}_FOUND)
      if(${_NAME}_FIND_REQUIRED_${comp})
        set(${_NAME}_FOUND FALSE)
      endif()
    endif()
  endforeach()
endmacro()

####################################################################################
include(CMakeFindDependencyMacro)
find_dependency(Threads)
include("${CMAKE_CURRENT_LIST_DIR}/callguardTargets.cmake")

# callguard_add_layer(NAME POLICY file.ini ...) runs this generator at the
# user's build time (callguardLayer.cmake says what it needs).
set(CALLGUARD_GENERATOR "${PACKAGE_PREFIX_DIR}/bin/callguard-gen" CACHE FILEPATH
    "callguard-gen, which callguard_add_layer(... POLICY ...) runs")
# Where the generator looks for clang's builtin headers (compiled into it).
set(CALLGUARD_CLANG_RESOURCE_INCLUDE "/usr/lib/llvm-14/lib/clang/14.0.6/include")
# The pass-through trampolines every layer with pass-through names is built with.
set(CALLGUARD_PASSTHROUGH_ASM "${PACKAGE_PREFIX_DIR}/share/callguard/passthrough.S")
include("${CMAKE_CURRENT_LIST_DIR}/callguardLayer.cmake")

check_required_components(callguard)
