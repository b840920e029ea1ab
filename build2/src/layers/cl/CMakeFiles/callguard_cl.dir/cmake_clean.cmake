file(REMOVE_RECURSE
  "../../../lib/libcallguard_cl.pdb"
  "../../../lib/libcallguard_cl.so"
  "CMakeFiles/callguard_cl.dir/__/passthrough.S.o"
  "CMakeFiles/callguard_cl.dir/cg_cl.c.o"
  "CMakeFiles/callguard_cl.dir/cg_cl.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang ASM C)
  include(CMakeFiles/callguard_cl.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
