file(REMOVE_RECURSE
  "../../bin/cg_prog_dlopen"
  "../../bin/cg_prog_dlopen.pdb"
  "CMakeFiles/cg_prog_dlopen.dir/prog.c.o"
  "CMakeFiles/cg_prog_dlopen.dir/prog.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_prog_dlopen.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
