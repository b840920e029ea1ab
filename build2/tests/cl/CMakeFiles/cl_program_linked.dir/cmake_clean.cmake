file(REMOVE_RECURSE
  "../../bin/cl_program_linked"
  "../../bin/cl_program_linked.pdb"
  "CMakeFiles/cl_program_linked.dir/cl_program.c.o"
  "CMakeFiles/cl_program_linked.dir/cl_program.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cl_program_linked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
