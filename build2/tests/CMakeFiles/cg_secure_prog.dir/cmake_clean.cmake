file(REMOVE_RECURSE
  "../bin/cg_secure_prog"
  "../bin/cg_secure_prog.pdb"
  "CMakeFiles/cg_secure_prog.dir/privilege/secure_prog.c.o"
  "CMakeFiles/cg_secure_prog.dir/privilege/secure_prog.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_secure_prog.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
