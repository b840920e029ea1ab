# CMake generated Testfile for 
# Source directory: /work/wt/path/tests/ocaml
# Build directory: /work/wt/path/build2/tests/ocaml
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[ocaml_pause_without_adapter_is_whole_wait]=] "/work/wt/path/build2/tests/ocaml/ml/cg_ocaml_pause" "none" "stall")
set_tests_properties([=[ocaml_pause_without_adapter_is_whole_wait]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:use_sigaltstack=0" LABELS "ocaml" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ocaml/CMakeLists.txt;38;add_test;/work/wt/path/tests/ocaml/CMakeLists.txt;0;")
add_test([=[ocaml_pause_detect_only_is_whole_wait]=] "/work/wt/path/build2/tests/ocaml/ml/cg_ocaml_pause" "detect" "stall" "1")
set_tests_properties([=[ocaml_pause_detect_only_is_whole_wait]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:use_sigaltstack=0" LABELS "ocaml" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ocaml/CMakeLists.txt;39;add_test;/work/wt/path/tests/ocaml/CMakeLists.txt;0;")
add_test([=[ocaml_pause_with_adapter_at_most_50ms]=] "/work/wt/path/build2/tests/ocaml/ml/cg_ocaml_pause" "active" "no-stall")
set_tests_properties([=[ocaml_pause_with_adapter_at_most_50ms]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:use_sigaltstack=0" LABELS "ocaml" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ocaml/CMakeLists.txt;40;add_test;/work/wt/path/tests/ocaml/CMakeLists.txt;0;")
add_test([=[ocaml_pending_signal_runs_after_the_guarded_call]=] "/work/wt/path/build2/tests/ocaml/ml/cg_ocaml_pause" "active" "signal")
set_tests_properties([=[ocaml_pending_signal_runs_after_the_guarded_call]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0:use_sigaltstack=0" LABELS "ocaml" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ocaml/CMakeLists.txt;41;add_test;/work/wt/path/tests/ocaml/CMakeLists.txt;0;")
