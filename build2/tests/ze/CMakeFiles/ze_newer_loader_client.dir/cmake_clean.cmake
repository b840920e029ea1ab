file(REMOVE_RECURSE
  "../../bin/ze_newer_loader_client"
  "../../bin/ze_newer_loader_client.pdb"
  "CMakeFiles/ze_newer_loader_client.dir/newer_loader_client.c.o"
  "CMakeFiles/ze_newer_loader_client.dir/newer_loader_client.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_newer_loader_client.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
