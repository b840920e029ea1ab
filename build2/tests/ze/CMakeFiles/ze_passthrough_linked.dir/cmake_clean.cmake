file(REMOVE_RECURSE
  "../../bin/ze_passthrough_linked"
  "../../bin/ze_passthrough_linked.pdb"
  "CMakeFiles/ze_passthrough_linked.dir/passthrough.c.o"
  "CMakeFiles/ze_passthrough_linked.dir/passthrough.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_passthrough_linked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
