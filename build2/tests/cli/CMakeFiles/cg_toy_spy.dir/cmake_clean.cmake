file(REMOVE_RECURSE
  "../../lib/libcg_toy_spy.pdb"
  "../../lib/libcg_toy_spy.so"
  "CMakeFiles/cg_toy_spy.dir/toy_spy.c.o"
  "CMakeFiles/cg_toy_spy.dir/toy_spy.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_toy_spy.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
