file(REMOVE_RECURSE
  "CMakeFiles/load_spirv"
  "spirv/k15.spv"
)

# Per-language clean rules from dependency scanning.
foreach(lang )
  include(CMakeFiles/load_spirv.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
