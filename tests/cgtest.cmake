# cg_discover_tests: one ctest test per case a test runner lists, so that a
# test is written once, as a function in the runner and its line in the
# runner's case table (cgtest_cases[] in C).
#
# `runner --list` names the cases; tests/cgtest_discover.cmake writes them
# as add_test calls into a file ctest reads through the directory's
# TEST_INCLUDE_FILES, as CMake's own gtest_discover_tests does. A C runner
# is listed after each build of it (and its cases show as one
# TARGET_NOT_BUILT test until then); a script runner when ctest starts.
# Either is listed again when ctest finds the runner or its settings newer
# than the list.
#
#   cg_discover_tests(TARGET runner | SCRIPT file RUNNER interpreter...
#     [NAME n]               names the list's files (default: the target's
#                            or the script's name, plus SUFFIX)
#     [PREFIX p] [SUFFIX s]  the test is p<case>s, run as `runner <case> ARGS...`
#     [ARGS a...]            arguments after the case name
#     [MATCH regex]          only the cases whose names match
#     [EXCLUDE regex]        not the cases whose names match (the ones
#                            another call registers with other properties)
#     [SKIP case...]         not these cases (what this build lacks, or what
#                            another call registers with other properties)
#     [CASES "case|a,b|V=1+W=2" ...]  one case's own arguments (replacing
#                            ARGS when given) and environment (appended)
#     [PROPERTIES k v ...])  test properties of every case
#
# In ARGS and PROPERTIES values, @CASE@ stands for the case name and @TEST@
# for the test name (say, a POCL_CACHE_DIR of the test's own). Generator
# expressions are allowed anywhere. A CASES entry naming no case of the
# runner is an error.
function(cg_discover_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;SCRIPT;NAME;PREFIX;SUFFIX;MATCH;EXCLUDE"
                        "RUNNER;ARGS;SKIP;CASES;PROPERTIES")
  if(arg_SCRIPT)
    get_filename_component(base ${arg_SCRIPT} NAME_WE)
    set(runner ${arg_RUNNER} ${arg_SCRIPT})
    set(watched ${arg_SCRIPT})
  else()
    set(base ${arg_TARGET})
    set(runner $<TARGET_FILE:${arg_TARGET}>)
    set(watched $<TARGET_FILE:${arg_TARGET}>)
  endif()
  set(key ${base}${arg_SUFFIX})
  if(arg_NAME)
    set(key ${arg_NAME})
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/cgtest-cases)
  set(settings ${dir}/${key}.settings.cmake)
  set(cases ${dir}/${key}.cases.cmake)
  set(include ${dir}/${key}.include.cmake)
  set(script ${PROJECT_SOURCE_DIR}/tests/cgtest_discover.cmake)

  # Values keep their semicolons (\; from PARSE_ARGV) inside bracket arguments.
  set(body "")
  foreach(var PREFIX SUFFIX ARGS MATCH EXCLUDE SKIP CASES PROPERTIES)
    string(APPEND body "set(cg_${var} [==[${arg_${var}}]==])\n")
  endforeach()
  string(APPEND body "set(cg_runner [==[${runner}]==])\nset(cg_source [==[${CMAKE_CURRENT_LIST_FILE}]==])\n")
  file(GENERATE OUTPUT ${settings} CONTENT "${body}")

  if(NOT arg_SCRIPT)
    add_custom_command(TARGET ${arg_TARGET} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -DSETTINGS=${settings} -DOUT=${cases} -P ${script} VERBATIM)
  endif()
  file(GENERATE OUTPUT ${include} CONTENT
    "if(EXISTS [==[${watched}]==] AND (NOT EXISTS [==[${cases}]==]
   OR [==[${watched}]==] IS_NEWER_THAN [==[${cases}]==] OR [==[${settings}]==] IS_NEWER_THAN [==[${cases}]==]))
  set(SETTINGS [==[${settings}]==])
  set(OUT [==[${cases}]==])
  include([==[${script}]==])
endif()
if(EXISTS [==[${cases}]==])
  include([==[${cases}]==])
else()
  add_test(${key}_NOT_BUILT ${key}_NOT_BUILT)
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include})
endfunction()
