file(REMOVE_RECURSE
  "../../bin/cgcuda_ptx_race"
  "../../bin/cgcuda_ptx_race.pdb"
  "CMakeFiles/cgcuda_ptx_race.dir/ptx_race.c.o"
  "CMakeFiles/cgcuda_ptx_race.dir/ptx_race.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgcuda_ptx_race.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
