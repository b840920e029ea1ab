file(REMOVE_RECURSE
  "../../bin/callguard-gen"
  "../../bin/callguard-gen.pdb"
  "CMakeFiles/callguard-gen.dir/__/policy/policy_ini.c.o"
  "CMakeFiles/callguard-gen.dir/__/policy/policy_ini.c.o.d"
  "CMakeFiles/callguard-gen.dir/emit.c.o"
  "CMakeFiles/callguard-gen.dir/emit.c.o.d"
  "CMakeFiles/callguard-gen.dir/main.c.o"
  "CMakeFiles/callguard-gen.dir/main.c.o.d"
  "CMakeFiles/callguard-gen.dir/parse.c.o"
  "CMakeFiles/callguard-gen.dir/parse.c.o.d"
  "CMakeFiles/callguard-gen.dir/policy.c.o"
  "CMakeFiles/callguard-gen.dir/policy.c.o.d"
  "CMakeFiles/callguard-gen.dir/util.c.o"
  "CMakeFiles/callguard-gen.dir/util.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard-gen.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
