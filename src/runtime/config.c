/* The process-wide configuration (config.h): its defaults. */
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include "config.h"

cgi_config cgi_cfg = {.stall_ns = 50u * 1000000u, .record_ns = CGI_HANG_RECORD_NS};
pthread_mutex_t cgi_cfg_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
