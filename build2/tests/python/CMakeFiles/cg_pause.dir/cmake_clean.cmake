file(REMOVE_RECURSE
  "../../bin/cg_pause"
  "../../bin/cg_pause.pdb"
  "CMakeFiles/cg_pause.dir/test_pause.c.o"
  "CMakeFiles/cg_pause.dir/test_pause.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_pause.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
