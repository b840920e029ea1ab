file(REMOVE_RECURSE
  "../../bin/cg_short_py"
  "../../bin/cg_short_py.pdb"
  "CMakeFiles/cg_short_py.dir/test_short_py.c.o"
  "CMakeFiles/cg_short_py.dir/test_short_py.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_short_py.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
