file(REMOVE_RECURSE
  "../../../lib/callguard/shims/libze_loader.so.1"
  "../../../lib/callguard/shims/libze_loader.so.1.pdb"
  "CMakeFiles/callguard_ze_shim.dir/cg_ze.c.o"
  "CMakeFiles/callguard_ze_shim.dir/cg_ze.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_ze_shim.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
