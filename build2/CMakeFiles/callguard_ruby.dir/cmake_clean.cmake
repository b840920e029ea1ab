file(REMOVE_RECURSE
  "CMakeFiles/callguard_ruby.dir/src/adapters/ruby.c.o"
  "CMakeFiles/callguard_ruby.dir/src/adapters/ruby.c.o.d"
  "libcallguard_ruby.a"
  "libcallguard_ruby.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_ruby.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
