# CMake generated Testfile for 
# Source directory: /work/wt/path/src/layers/cuda
# Build directory: /work/wt/path/build2/src/layers/cuda
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
