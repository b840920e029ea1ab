file(REMOVE_RECURSE
  "../../bin/cuda_event_query"
  "../../bin/cuda_event_query.pdb"
  "CMakeFiles/cuda_event_query.dir/event_query.c.o"
  "CMakeFiles/cuda_event_query.dir/event_query.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cuda_event_query.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
