file(REMOVE_RECURSE
  "../../bin/cl_program_plain"
  "../../bin/cl_program_plain.pdb"
  "CMakeFiles/cl_program_plain.dir/cl_program.c.o"
  "CMakeFiles/cl_program_plain.dir/cl_program.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cl_program_plain.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
