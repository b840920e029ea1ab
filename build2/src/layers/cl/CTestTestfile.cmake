# CMake generated Testfile for 
# Source directory: /work/wt/path/src/layers/cl
# Build directory: /work/wt/path/build2/src/layers/cl
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
