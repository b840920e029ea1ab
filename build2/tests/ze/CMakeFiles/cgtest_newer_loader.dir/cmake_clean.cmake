file(REMOVE_RECURSE
  "CMakeFiles/cgtest_newer_loader.dir/newer_loader.c.o"
  "CMakeFiles/cgtest_newer_loader.dir/newer_loader.c.o.d"
  "newer-loader/libze_loader.so.1"
  "newer-loader/libze_loader.so.1.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_newer_loader.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
