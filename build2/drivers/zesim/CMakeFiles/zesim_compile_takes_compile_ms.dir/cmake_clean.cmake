file(REMOVE_RECURSE
  "../../bin/zesim_compile_takes_compile_ms"
  "../../bin/zesim_compile_takes_compile_ms.pdb"
  "CMakeFiles/zesim_compile_takes_compile_ms.dir/tests/compile_time.c.o"
  "CMakeFiles/zesim_compile_takes_compile_ms.dir/tests/compile_time.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_compile_takes_compile_ms.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
