file(REMOVE_RECURSE
  "CMakeFiles/cgcuda_next_stub.dir/next-stub/next_stub.c.o"
  "CMakeFiles/cgcuda_next_stub.dir/next-stub/next_stub.c.o.d"
  "next-stub/libcgcuda-next.so"
  "next-stub/libcgcuda-next.so.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgcuda_next_stub.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
