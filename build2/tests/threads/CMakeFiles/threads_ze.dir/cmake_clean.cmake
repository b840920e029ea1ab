file(REMOVE_RECURSE
  "../../bin/threads_ze"
  "../../bin/threads_ze.pdb"
  "CMakeFiles/threads_ze.dir/threads_ze.c.o"
  "CMakeFiles/threads_ze.dir/threads_ze.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/threads_ze.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
