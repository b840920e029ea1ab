file(REMOVE_RECURSE
  "../../bin/load_worker_cl"
  "../../bin/load_worker_cl.pdb"
  "CMakeFiles/load_worker_cl.dir/worker_cl.c.o"
  "CMakeFiles/load_worker_cl.dir/worker_cl.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/load_worker_cl.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
