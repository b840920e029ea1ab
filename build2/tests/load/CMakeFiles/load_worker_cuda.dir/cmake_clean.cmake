file(REMOVE_RECURSE
  "../../bin/load_worker_cuda"
  "../../bin/load_worker_cuda.pdb"
  "CMakeFiles/load_worker_cuda.dir/worker_cuda.c.o"
  "CMakeFiles/load_worker_cuda.dir/worker_cuda.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/load_worker_cuda.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
