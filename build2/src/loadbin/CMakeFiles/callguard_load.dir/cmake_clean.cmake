file(REMOVE_RECURSE
  "../../lib/libcallguard-load.pdb"
  "../../lib/libcallguard-load.so"
  "../../lib/libcallguard-load.so.0"
  "../../lib/libcallguard-load.so.0.1.0"
  "CMakeFiles/callguard_load.dir/cl.c.o"
  "CMakeFiles/callguard_load.dir/cl.c.o.d"
  "CMakeFiles/callguard_load.dir/cuda.c.o"
  "CMakeFiles/callguard_load.dir/cuda.c.o.d"
  "CMakeFiles/callguard_load.dir/disk.c.o"
  "CMakeFiles/callguard_load.dir/disk.c.o.d"
  "CMakeFiles/callguard_load.dir/load.c.o"
  "CMakeFiles/callguard_load.dir/load.c.o.d"
  "CMakeFiles/callguard_load.dir/sha256.c.o"
  "CMakeFiles/callguard_load.dir/sha256.c.o.d"
  "CMakeFiles/callguard_load.dir/ze.c.o"
  "CMakeFiles/callguard_load.dir/ze.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_load.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
