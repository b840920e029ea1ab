/* The Python package and distribution a file belongs to (pypackage.c). */
#ifndef CGI_PYPACKAGE_H
#define CGI_PYPACKAGE_H

#include "../common/common.h"
#include "../common/stats_file.h"

#include <stdio.h>

typedef struct cgi_py_pkg {
    char package[64];      /* the top-level package (or module) under site-packages */
    char distribution[96]; /* its distribution's name, "" when none was found */
    char version[48];      /* the distribution's version, "" when none was found */
} cgi_py_pkg;

/* 1 and *out when file is under a site-packages (or dist-packages) folder;
 * the distribution from the folder's *.dist-info where one names the
 * package or lists it in top_level.txt. 0 for any other file. */
CGI_HIDDEN int cgi_py_package(const char *file, cgi_py_pkg *out);
/* The package a stall is charged to: its place's, else that of its first
 * frame outside the standard library, else the module it was importing. */
CGI_HIDDEN int cgi_stall_package(const cgi_stall *st, cgi_py_pkg *out);

#endif
