file(REMOVE_RECURSE
  "../../bin/ze_pause_linked"
  "../../bin/ze_pause_linked.pdb"
  "CMakeFiles/ze_pause_linked.dir/pause.c.o"
  "CMakeFiles/ze_pause_linked.dir/pause.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_pause_linked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
