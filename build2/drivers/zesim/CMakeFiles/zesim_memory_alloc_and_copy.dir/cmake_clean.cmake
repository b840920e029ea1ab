file(REMOVE_RECURSE
  "../../bin/zesim_memory_alloc_and_copy"
  "../../bin/zesim_memory_alloc_and_copy.pdb"
  "CMakeFiles/zesim_memory_alloc_and_copy.dir/tests/memory.c.o"
  "CMakeFiles/zesim_memory_alloc_and_copy.dir/tests/memory.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_memory_alloc_and_copy.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
