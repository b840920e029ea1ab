file(REMOVE_RECURSE
  "../../bin/ze_event_poll"
  "../../bin/ze_event_poll.pdb"
  "CMakeFiles/ze_event_poll.dir/event_poll.c.o"
  "CMakeFiles/ze_event_poll.dir/event_poll.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_event_poll.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
