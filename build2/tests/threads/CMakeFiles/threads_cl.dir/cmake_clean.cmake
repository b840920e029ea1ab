file(REMOVE_RECURSE
  "../../bin/threads_cl"
  "../../bin/threads_cl.pdb"
  "CMakeFiles/threads_cl.dir/threads_cl.c.o"
  "CMakeFiles/threads_cl.dir/threads_cl.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/threads_cl.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
