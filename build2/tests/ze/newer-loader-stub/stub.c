typedef int cg_link_time_stub;
