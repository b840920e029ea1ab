file(REMOVE_RECURSE
  "../../lib/libcg_igc_probe.pdb"
  "../../lib/libcg_igc_probe.so"
  "CMakeFiles/cg_igc_probe.dir/igc_probe.c.o"
  "CMakeFiles/cg_igc_probe.dir/igc_probe.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_igc_probe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
