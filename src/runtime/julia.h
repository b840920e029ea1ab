/* The Julia adapter (adapter_julia.c). */
#ifndef CGI_JULIA_H
#define CGI_JULIA_H

#include "internal.h"

/* The adapter when this process has Julia (libjulia is loaded), else NULL. */
CGI_HIDDEN const cg_adapter *cgi_julia_adapter_if_present(void);

#endif
