file(REMOVE_RECURSE
  "CMakeFiles/cgtest_debian_ze_stub.dir/newer-loader-stub/stub.c.o"
  "CMakeFiles/cgtest_debian_ze_stub.dir/newer-loader-stub/stub.c.o.d"
  "newer-loader-stub/libcgtest-debian-ze.so"
  "newer-loader-stub/libcgtest-debian-ze.so.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_debian_ze_stub.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
