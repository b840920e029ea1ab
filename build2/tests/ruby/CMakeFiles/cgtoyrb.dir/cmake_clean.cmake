file(REMOVE_RECURSE
  "CMakeFiles/cgtoyrb.dir/ext.c.o"
  "CMakeFiles/cgtoyrb.dir/ext.c.o.d"
  "ext/cgtoyrb.pdb"
  "ext/cgtoyrb.so"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtoyrb.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
