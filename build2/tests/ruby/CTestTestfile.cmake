# CMake generated Testfile for 
# Source directory: /work/wt/path/tests/ruby
# Build directory: /work/wt/path/build2/tests/ruby
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[ruby_pause_without_adapter_is_whole_wait]=] "/usr/bin/ruby" "/work/wt/path/tests/ruby/pause.rb" "/work/wt/path/build2/tests/ruby/ext" "none" "stall")
set_tests_properties([=[ruby_pause_without_adapter_is_whole_wait]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0" LABELS "ruby" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ruby/CMakeLists.txt;42;add_test;/work/wt/path/tests/ruby/CMakeLists.txt;0;")
add_test([=[ruby_pause_detect_only_is_whole_wait]=] "/usr/bin/ruby" "/work/wt/path/tests/ruby/pause.rb" "/work/wt/path/build2/tests/ruby/ext" "detect" "stall" "1")
set_tests_properties([=[ruby_pause_detect_only_is_whole_wait]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0" LABELS "ruby" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ruby/CMakeLists.txt;43;add_test;/work/wt/path/tests/ruby/CMakeLists.txt;0;")
add_test([=[ruby_pause_with_adapter_at_most_50ms]=] "/usr/bin/ruby" "/work/wt/path/tests/ruby/pause.rb" "/work/wt/path/build2/tests/ruby/ext" "active" "no-stall")
set_tests_properties([=[ruby_pause_with_adapter_at_most_50ms]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0" LABELS "ruby" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ruby/CMakeLists.txt;44;add_test;/work/wt/path/tests/ruby/CMakeLists.txt;0;")
add_test([=[ruby_pending_interrupt_runs_after_the_guarded_call]=] "/usr/bin/ruby" "/work/wt/path/tests/ruby/pause.rb" "/work/wt/path/build2/tests/ruby/ext" "active" "signal")
set_tests_properties([=[ruby_pending_interrupt_runs_after_the_guarded_call]=] PROPERTIES  ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1;ASAN_OPTIONS=verify_asan_link_order=0;ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0" LABELS "ruby" RUN_SERIAL "TRUE" TIMEOUT "60" _BACKTRACE_TRIPLES "/work/wt/path/tests/ruby/CMakeLists.txt;45;add_test;/work/wt/path/tests/ruby/CMakeLists.txt;0;")
