# CMake generated Testfile for 
# Source directory: /work/wt/path
# Build directory: /work/wt/path/build2
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("src/layers/cl")
subdirs("src/layers/cuda")
subdirs("src/layers/ze")
subdirs("src/loadbin")
subdirs("src/gen")
subdirs("drivers/zesim")
subdirs("tests")
subdirs("tests/gen")
subdirs("tests/cl")
subdirs("tests/ze")
subdirs("tests/cuda")
subdirs("tests/cli")
subdirs("tests/pkg")
subdirs("tests/load")
subdirs("tests/threads")
subdirs("bench")
subdirs("tests/package")
