# CMake generated Testfile for 
# Source directory: /work/wt/path/tests/gpu
# Build directory: /work/wt/path/build2/tests/gpu
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[gpu_proof_runs_on_the_standin]=] "bash" "/work/wt/path/tests/gpu/run.sh" "/work/wt/path/build2/tests/gpu/standin-results" "/work/wt/path/build2")
set_tests_properties([=[gpu_proof_runs_on_the_standin]=] PROPERTIES  ENVIRONMENT "CUDA_REAL=standin;PYTHON=/usr/bin/python3;CUDA_PYTHON=/work/wt/path/build-venv/bin/python" LABELS "cuda;python" RUN_SERIAL "TRUE" TIMEOUT "300" _BACKTRACE_TRIPLES "/work/wt/path/tests/gpu/CMakeLists.txt;38;add_test;/work/wt/path/tests/gpu/CMakeLists.txt;0;")
