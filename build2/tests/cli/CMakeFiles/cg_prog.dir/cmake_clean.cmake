file(REMOVE_RECURSE
  "../../bin/cg_prog"
  "../../bin/cg_prog.pdb"
  "CMakeFiles/cg_prog.dir/prog.c.o"
  "CMakeFiles/cg_prog.dir/prog.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_prog.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
