file(REMOVE_RECURSE
  "../../bin/load_worker_ze"
  "../../bin/load_worker_ze.pdb"
  "CMakeFiles/load_worker_ze.dir/worker_ze.c.o"
  "CMakeFiles/load_worker_ze.dir/worker_ze.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/load_worker_ze.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
