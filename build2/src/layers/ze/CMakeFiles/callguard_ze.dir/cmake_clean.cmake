file(REMOVE_RECURSE
  "../../../lib/libcallguard_ze.pdb"
  "../../../lib/libcallguard_ze.so"
  "CMakeFiles/callguard_ze.dir/__/passthrough.S.o"
  "CMakeFiles/callguard_ze.dir/cg_ze.c.o"
  "CMakeFiles/callguard_ze.dir/cg_ze.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang ASM C)
  include(CMakeFiles/callguard_ze.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
