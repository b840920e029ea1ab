file(REMOVE_RECURSE
  "../../lib/libcgclspy.pdb"
  "../../lib/libcgclspy.so"
  "CMakeFiles/cgclspy.dir/cl_spy.c.o"
  "CMakeFiles/cgclspy.dir/cl_spy.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgclspy.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
