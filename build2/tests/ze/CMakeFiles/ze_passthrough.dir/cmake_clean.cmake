file(REMOVE_RECURSE
  "../../bin/ze_passthrough"
  "../../bin/ze_passthrough.pdb"
  "CMakeFiles/ze_passthrough.dir/passthrough.c.o"
  "CMakeFiles/ze_passthrough.dir/passthrough.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_passthrough.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
