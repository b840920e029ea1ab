file(REMOVE_RECURSE
  "../../lib/libcg_enospc.pdb"
  "../../lib/libcg_enospc.so"
  "CMakeFiles/cg_enospc.dir/enospc.c.o"
  "CMakeFiles/cg_enospc.dir/enospc.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_enospc.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
