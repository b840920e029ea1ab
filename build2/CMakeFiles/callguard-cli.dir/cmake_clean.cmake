file(REMOVE_RECURSE
  "CMakeFiles/callguard-cli.dir/src/cli/layers.c.o"
  "CMakeFiles/callguard-cli.dir/src/cli/layers.c.o.d"
  "CMakeFiles/callguard-cli.dir/src/cli/list.c.o"
  "CMakeFiles/callguard-cli.dir/src/cli/list.c.o.d"
  "CMakeFiles/callguard-cli.dir/src/cli/main.c.o"
  "CMakeFiles/callguard-cli.dir/src/cli/main.c.o.d"
  "CMakeFiles/callguard-cli.dir/src/cli/real_library.c.o"
  "CMakeFiles/callguard-cli.dir/src/cli/real_library.c.o.d"
  "CMakeFiles/callguard-cli.dir/src/cli/run.c.o"
  "CMakeFiles/callguard-cli.dir/src/cli/run.c.o.d"
  "bin/callguard"
  "bin/callguard.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard-cli.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
