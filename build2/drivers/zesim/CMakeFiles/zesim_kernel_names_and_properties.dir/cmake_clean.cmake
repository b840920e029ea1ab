file(REMOVE_RECURSE
  "../../bin/zesim_kernel_names_and_properties"
  "../../bin/zesim_kernel_names_and_properties.pdb"
  "CMakeFiles/zesim_kernel_names_and_properties.dir/tests/kernels.c.o"
  "CMakeFiles/zesim_kernel_names_and_properties.dir/tests/kernels.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_kernel_names_and_properties.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
