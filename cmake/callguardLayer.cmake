# callguardLayer.cmake: callguard_add_layer(), which builds a guarded API
# layer. Installed with callguard's CMake package (find_package(callguard))
# and included by callguard's own build, so both build layers one way.
#
#   callguard_add_layer(NAME
#                       POLICY file.ini | SOURCE cg_NAME.c
#                       [INCLUDE_DIRECTORIES dir...]
#                       [LIBRARY_PATH /abs/path/libNAME.so.N]
#                       [VERSION_SCRIPT file.versions]
#                       [OUTPUT_DIRECTORY dir]
#                       [NO_SHIM] [INSTALL])
#
# Builds target callguard_NAME, libcallguard_NAME.so, linked to
# callguard::callguard, and (unless NO_SHIM) target callguard_NAME_shim: the
# same layer under the vendor library's soname ([api] library), in
# OUTPUT_DIRECTORY/callguard/shims/ beside the layer, as installed callguard
# keeps its own. NAME is the policy's [api] name.
#
#   POLICY               generate the layer at build time: a custom command
#                        runs callguard-gen on the policy and the API header,
#                        again whenever either changes. Needs the generator
#                        installed with callguard and libclang (Debian:
#                        libclang1-14, libclang-common-14-dev; the pip
#                        package's generator: PyPI's libclang, the extra
#                        `gen`), checked when this function runs, with one
#                        clear error if missing.
#                        The header must exist at configure time.
#   SOURCE               a layer callguard-gen wrote already (committed, say):
#                        no generator or libclang needed.
#   INCLUDE_DIRECTORIES  where the API header is: -I for callguard-gen and the
#                        compiler. The policy's own `cflags = -I DIR` (DIR
#                        relative to the policy's folder) count as well.
#   LIBRARY_PATH         the real library's absolute path, the layer's last
#                        resort after RTLD_NEXT, an already loaded copy and
#                        CALLGUARD_<NAME>_LIBRARY. Generator expressions work.
#   VERSION_SCRIPT       the real library's symbol versions, given to the shim.
#   OUTPUT_DIRECTORY     where libcallguard_NAME.so goes (default:
#                        CMAKE_LIBRARY_OUTPUT_DIRECTORY, else the current
#                        binary directory).
#   INSTALL              install the layer in CMAKE_INSTALL_LIBDIR and the
#                        shim in CMAKE_INSTALL_LIBDIR/callguard/shims.
#
# CALLGUARD_GENERATOR (cache) names another callguard-gen to run.
include_guard(GLOBAL)

# The one-line reason a generator cannot start, from what the dynamic loader said.
function(_callguard_gen_start_error gen output out_var)
  if(output MATCHES "error while loading shared libraries: ([^:]+):")
    set(lib ${CMAKE_MATCH_1})
    if(lib MATCHES "^libclang-([0-9]+)\\.so")
      set(pkg "libclang1-${CMAKE_MATCH_1}")
    elseif(lib MATCHES "^libinih")
      set(pkg "libinih1")
    elseif(lib MATCHES "^libLLVM-([0-9]+)\\.so")
      set(pkg "libllvm${CMAKE_MATCH_1}")
    else()
      set(pkg "")
    endif()
    if(pkg)
      set(${out_var} "${gen} cannot start: ${lib} is missing (Debian package ${pkg})" PARENT_SCOPE)
    else()
      set(${out_var} "${gen} cannot start: ${lib} is missing" PARENT_SCOPE)
    endif()
  else()
    string(STRIP "${output}" output)
    set(${out_var} "${gen} --help failed: ${output}" PARENT_SCOPE)
  endif()
endfunction()

# Checks once per configure that the installed generator runs and that
# clang's builtin headers are where it will look for them.
function(_callguard_check_generator caller)
  get_property(checked GLOBAL PROPERTY _CALLGUARD_GENERATOR_CHECKED)
  if(checked AND checked STREQUAL CALLGUARD_GENERATOR)
    return()
  endif()
  set(why "")
  if(NOT CALLGUARD_GENERATOR)
    set(why "no generator: set CALLGUARD_GENERATOR to callguard-gen")
  elseif(NOT EXISTS "${CALLGUARD_GENERATOR}" OR IS_DIRECTORY "${CALLGUARD_GENERATOR}")
    string(CONCAT why "the layer generator ${CALLGUARD_GENERATOR} is not there (callguard-gen is installed in "
                      "bin/ with callguard; set CALLGUARD_GENERATOR if yours is elsewhere)")
  else()
    execute_process(COMMAND "${CALLGUARD_GENERATOR}" --help RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    if(NOT rc STREQUAL "0")
      _callguard_gen_start_error("${CALLGUARD_GENERATOR}" "${err}${out}" why)
    elseif(CALLGUARD_CLANG_RESOURCE_INCLUDE AND NOT EXISTS "${CALLGUARD_CLANG_RESOURCE_INCLUDE}/stddef.h")
      set(pkg "libclang-common-14-dev")
      if(CALLGUARD_CLANG_RESOURCE_INCLUDE MATCHES "/llvm-([0-9]+)/")
        set(pkg "libclang-common-${CMAKE_MATCH_1}-dev")
      endif()
      string(CONCAT why "clang's builtin headers, which ${CALLGUARD_GENERATOR} reads API headers with, are "
                        "missing: no ${CALLGUARD_CLANG_RESOURCE_INCLUDE}/stddef.h (Debian package ${pkg})")
    endif()
  endif()
  if(why)
    message(FATAL_ERROR "${caller}: cannot generate the layer: ${why}. callguard_add_layer(... POLICY ...) runs "
                        "callguard-gen at build time, which needs libclang; a layer generated already builds "
                        "without them: callguard_add_layer(NAME SOURCE cg_NAME.c).")
  endif()
  set_property(GLOBAL PROPERTY _CALLGUARD_GENERATOR_CHECKED "${CALLGUARD_GENERATOR}")
endfunction()

# Pass-through names (include/callguard/layer.h): a layer whose generated
# source has them is built with passthrough.S, assembled with the list of
# names callguard-gen wrote beside it (cg_NAME_passthrough.h).
if(NOT CALLGUARD_PASSTHROUGH_ASM)
  set(CALLGUARD_PASSTHROUGH_ASM "${CMAKE_CURRENT_LIST_DIR}/../src/layers/passthrough.S")
endif()
function(_callguard_add_passthrough target source)
  if(ARGC GREATER 2)
    set(text "${ARGV2}")
  else()
    file(READ "${source}" text)
  endif()
  if(NOT text MATCHES "\n    \\.passthrough = cgl_passthrough,")
    return()
  endif()
  if(NOT CMAKE_ASM_COMPILER_LOADED)
    message(FATAL_ERROR "${target}: the layer forwards pass-through names through assembly trampolines "
                        "(passthrough.S): enable ASM (project(... LANGUAGES C ASM) or enable_language(ASM))")
  endif()
  string(REGEX REPLACE "\\.c$" "_passthrough.h" list "${source}")
  target_sources(${target} PRIVATE "${CALLGUARD_PASSTHROUGH_ASM}")
  # The list is included through a macro, which dependency scanning does not
  # follow: without this, regenerating the list leaves stale trampolines.
  set_property(SOURCE "${CALLGUARD_PASSTHROUGH_ASM}" TARGET_DIRECTORY ${target} APPEND PROPERTY OBJECT_DEPENDS "${list}")
  target_compile_definitions(${target} PRIVATE "$<$<COMPILE_LANGUAGE:ASM>:CGL_PASSTHROUGH_LIST=\"${list}\">")
endfunction()

# Reads the API name, soname and header from a generated layer's text.
function(_callguard_layer_facts text prefix)
  foreach(field api soname header)
    if(text MATCHES "\n    \\.${field} = \"([^\"]*)\"")
      set(${prefix}_${field} "${CMAKE_MATCH_1}" PARENT_SCOPE)
    else()
      set(${prefix}_${field} "" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

# A shim's real library: the shim needs libcallguard-real-API.so, a
# slash-free name that `callguard run` links, in its per-run shim folder, to
# the library chosen for the run. dlsym on the shim's handle searches the
# shim, then its dependencies: every name the real library exports and the
# shim does not define resolves to the real function, and a name neither
# has stays NULL. Linked here against an empty stub of that name, built in
# callguard-shim-stubs/ of the build tree, which is on no run path and never
# installed (a shim that found the stub would find no real function).
function(_callguard_shim_link_real target api)
  set(real libcallguard-real-${api}.so)
  set(stub callguard_real_stub_${api})
  if(NOT TARGET ${stub})
    set(dir ${CMAKE_BINARY_DIR}/callguard-shim-stubs)
    file(CONFIGURE OUTPUT ${dir}/real_stub.c
      CONTENT "/* Stands in for the real library at link time only: never loaded. */\ntypedef int cg_real_stub;\n")
    add_library(${stub} SHARED ${dir}/real_stub.c)
    set_target_properties(${stub} PROPERTIES PREFIX "" SUFFIX "" OUTPUT_NAME ${real} NO_SONAME ON
      LIBRARY_OUTPUT_DIRECTORY ${dir})
    target_link_options(${stub} PRIVATE -Wl,-soname,${real})
  endif()
  # By file, not target_link_libraries: CMake would put the stub's folder on
  # the shim's run path. --as-needed after it rather than --push-state and
  # --pop-state, which zig cc (scripts/build-wheel.sh) does not pass on;
  # what follows is libcallguard and libdl, needed or not by every shim alike.
  target_link_options(${target} PRIVATE "LINKER:--no-as-needed" $<TARGET_FILE:${stub}> "LINKER:--as-needed")
  add_dependencies(${target} ${stub})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS $<TARGET_FILE:${stub}>)
endfunction()

function(callguard_add_layer name)
  cmake_parse_arguments(L "NO_SHIM;INSTALL" "POLICY;SOURCE;LIBRARY_PATH;VERSION_SCRIPT;OUTPUT_DIRECTORY"
                        "INCLUDE_DIRECTORIES" ${ARGN})
  set(caller "callguard_add_layer(${name})")
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "callguard_add_layer(${name} ...): NAME must be the policy's [api] name "
                        "(lower case letters, digits, _): the layer is libcallguard_NAME.so")
  endif()
  if(L_UNPARSED_ARGUMENTS)
    list(GET L_UNPARSED_ARGUMENTS 0 bad)
    message(FATAL_ERROR "${caller}: unexpected argument '${bad}': expected POLICY file.ini or SOURCE file.c, "
                        "INCLUDE_DIRECTORIES, LIBRARY_PATH, VERSION_SCRIPT, OUTPUT_DIRECTORY, NO_SHIM, INSTALL "
                        "(the old callguard_add_layer(target source) is callguard_add_layer(NAME SOURCE source))")
  endif()
  if((L_POLICY AND L_SOURCE) OR (NOT L_POLICY AND NOT L_SOURCE))
    message(FATAL_ERROR "${caller}: give one of POLICY file.ini (generate the layer) or SOURCE file.c "
                        "(a layer generated already)")
  endif()
  if(NOT CMAKE_C_COMPILER_LOADED)
    message(FATAL_ERROR "${caller}: layers are C: enable it (project(... LANGUAGES C) or enable_language(C))")
  endif()
  if(TARGET callguard_${name})
    message(FATAL_ERROR "${caller}: target callguard_${name} exists already")
  endif()

  set(includes "")
  foreach(dir IN LISTS L_INCLUDE_DIRECTORIES)
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND includes "${dir}")
  endforeach()

  if(L_POLICY)
    if(CALLGUARD_IN_TREE)
      message(FATAL_ERROR "${caller}: callguard's own layers are committed (SOURCE cg_${name}.c; "
                          "tests/gen/layers.txt regenerates them)")
    endif()
    get_filename_component(policy "${L_POLICY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${policy}")
      message(FATAL_ERROR "${caller}: POLICY ${L_POLICY}: no such file (${policy})")
    endif()
    _callguard_check_generator("${caller}")
    get_filename_component(pdir "${policy}" DIRECTORY)

    # The policy's cflags may say where its header is (-I DIR, relative to
    # the policy's folder): the generator and the compiler both get those
    # directories, so INCLUDE_DIRECTORIES need not repeat them.
    file(STRINGS "${policy}" cflags_lines REGEX "^[ \t]*cflags[ \t]*[=:]")
    foreach(line IN LISTS cflags_lines)
      string(REGEX REPLACE "^[ \t]*cflags[ \t]*[=:]" "" flags "${line}")
      string(REGEX REPLACE "[ \t];.*$" "" flags "${flags}") # an inline comment
      separate_arguments(flags UNIX_COMMAND "${flags}")
      set(dir_next OFF)
      foreach(f IN LISTS flags)
        set(dir "")
        if(dir_next)
          set(dir "${f}")
          set(dir_next OFF)
        elseif(f STREQUAL "-I")
          set(dir_next ON)
        elseif(f MATCHES "^-I(.+)$")
          set(dir "${CMAKE_MATCH_1}")
        endif()
        if(NOT dir STREQUAL "")
          get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${pdir}")
          list(APPEND includes "${dir}")
        endif()
      endforeach()
    endforeach()

    # Generate once now: the policy and the header are checked by the
    # generator's own reader at configure time, and its output names the
    # API, the soname and the header.
    set(gen_args "${policy}")
    foreach(dir IN LISTS includes)
      list(APPEND gen_args -I "${dir}")
    endforeach()
    set(gendir "${CMAKE_CURRENT_BINARY_DIR}/callguard_${name}")
    file(MAKE_DIRECTORY "${gendir}")
    execute_process(COMMAND "${CALLGUARD_GENERATOR}" ${gen_args} -o "${gendir}" --stdout
                    RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
    if(NOT rc STREQUAL "0")
      string(STRIP "${err}" err)
      if(err MATCHES "^callguard-gen: (no libclang found|CALLGUARD_LIBCLANG=)")
        # The pip package's generator, which loads libclang as it starts (src/gen/clang.h).
        message(FATAL_ERROR "${caller}: cannot generate the layer: ${err}")
      endif()
      message(FATAL_ERROR "${caller}: callguard-gen refused ${L_POLICY} (exit ${rc}):\n${err}")
    endif()
    _callguard_layer_facts("${text}" facts)
    set(source "${gendir}/cg_${facts_api}.c")
    set(outputs "${source}")
    if(text MATCHES "\n    \\.passthrough = cgl_passthrough,")
      list(APPEND outputs "${gendir}/cg_${facts_api}_passthrough.h")
    endif()

    # What the generated file depends on: the policy, the files it names
    # (passthrough = @FILE), the header and the generator.
    set(depends "${policy}" "${CALLGUARD_GENERATOR}")
    file(STRINGS "${policy}" at_lines REGEX "^[ \t]*passthrough[ \t]*[=:][ \t]*@")
    foreach(line IN LISTS at_lines)
      string(REGEX REPLACE "^[^@]*@[ \t]*" "" f "${line}")
      string(STRIP "${f}" f)
      get_filename_component(f "${f}" ABSOLUTE BASE_DIR "${pdir}")
      list(APPEND depends "${f}")
    endforeach()
    foreach(dir IN LISTS includes)
      if(facts_header AND EXISTS "${dir}/${facts_header}")
        list(APPEND depends "${dir}/${facts_header}")
        break()
      endif()
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${policy}")
    add_custom_command(OUTPUT ${outputs}
      COMMAND "${CALLGUARD_GENERATOR}" ${gen_args} -o "${gendir}"
      DEPENDS ${depends}
      COMMENT "callguard-gen: the ${facts_api} layer from ${L_POLICY}"
      VERBATIM)
    # One target owns the generated file, so the layer and its shim never
    # run the rule twice at once.
    add_custom_target(callguard_${name}_source DEPENDS "${source}")
  else()
    get_filename_component(source "${L_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${source}")
      message(FATAL_ERROR "${caller}: SOURCE ${L_SOURCE}: no such file (${source})")
    endif()
    file(READ "${source}" text)
    _callguard_layer_facts("${text}" facts)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${source}")
  endif()

  string(REGEX REPLACE ",.*" "" facts_soname "${facts_soname}")  # the first of several
  if(NOT facts_api OR NOT facts_soname)
    message(FATAL_ERROR "${caller}: ${source} does not read as a layer callguard-gen wrote (no .api or .soname)")
  endif()
  if(NOT facts_api STREQUAL name)
    message(FATAL_ERROR "${caller}: the policy's [api] name is '${facts_api}': NAME must be the API's name "
                        "(the layer is libcallguard_${facts_api}.so)")
  endif()
  string(TOUPPER "${name}" upper)

  if(L_OUTPUT_DIRECTORY)
    get_filename_component(outdir "${L_OUTPUT_DIRECTORY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  elseif(CMAKE_LIBRARY_OUTPUT_DIRECTORY)
    set(outdir "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
  else()
    set(outdir "${CMAKE_CURRENT_BINARY_DIR}")
  endif()

  set(targets callguard_${name})
  if(NOT L_NO_SHIM)
    list(APPEND targets callguard_${name}_shim)
  endif()
  foreach(t IN LISTS targets)
    add_library(${t} SHARED "${source}")
    # Not the shim: its dependency, the real library, answers those names.
    if(t STREQUAL "callguard_${name}")
      _callguard_add_passthrough(${t} "${source}" "${text}")
    endif()
    # gnu11: the wrappers take the header's own prototypes with __typeof__.
    set_target_properties(${t} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS ON
      C_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON)
    # The calling folder too: a hand-written cg_NAME_hand.c there is found when the generated file
    # sits in a folder of its own (callguard's: src/layers/NAME/generated/).
    target_include_directories(${t} PRIVATE ${includes} ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${t} PRIVATE callguard::callguard ${CMAKE_DL_LIBS})
    # A deprecated entry point is still wrapped; nodelete: a dlclose must not
    # unmap code another thread may still be in.
    target_compile_options(${t} PRIVATE -Wno-deprecated-declarations)
    target_link_options(${t} PRIVATE -Wl,-z,nodelete)
    if(L_LIBRARY_PATH)
      target_compile_definitions(${t} PRIVATE "CG_LIBRARY_PATH_${upper}=\"${L_LIBRARY_PATH}\"")
    endif()
  endforeach()
  set_target_properties(callguard_${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${outdir}")
  if(L_POLICY)
    foreach(t IN LISTS targets)
      add_dependencies(${t} callguard_${name}_source)
    endforeach()
  endif()

  if(NOT L_NO_SHIM)
    # The shim answers a dlopen of the soname: it has the soname, the
    # vendor's symbol versions, the real library as its dependency, and sits
    # where `callguard run` looks.
    set(shim callguard_${name}_shim)
    target_link_options(${shim} PRIVATE "-Wl,-soname,${facts_soname}")
    _callguard_shim_link_real(${shim} ${name})
    if(L_VERSION_SCRIPT)
      get_filename_component(vs "${L_VERSION_SCRIPT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      target_link_options(${shim} PRIVATE "-Wl,--version-script=${vs}")
      set_property(TARGET ${shim} APPEND PROPERTY LINK_DEPENDS "${vs}")
    endif()
    set_target_properties(${shim} PROPERTIES PREFIX "" SUFFIX "" OUTPUT_NAME "${facts_soname}"
      LIBRARY_OUTPUT_DIRECTORY "${outdir}/callguard/shims")
  endif()

  if(L_INSTALL)
    include(GNUInstallDirs)
    set_target_properties(${targets} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
    install(TARGETS callguard_${name} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    if(NOT L_NO_SHIM)
      install(TARGETS ${shim} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/callguard/shims)
    endif()
  endif()
endfunction()
