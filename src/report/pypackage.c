/* The Python package a stall's file belongs to (json_write.c, text_stalls.c), so that a
 * stall in someone else's library is one line a user can report upstream:
 * ".../site-packages/torch/cuda/__init__.py" is package torch, and the
 * distribution whose dist-info lists torch in top_level.txt (or names it)
 * is torch 2.11.0. Read when the report is written, after the run, never
 * on the call path; a file of another machine (a saved report) still
 * gets its package from the path alone. */
#define _GNU_SOURCE
#include "pypackage.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* Distributions looked at in one site-packages folder: bounded, as a
 * report must not take long on a folder of thousands. */
#define CGI_DIST_SCAN_MAX 4096

/* "torch_geometric" and "Torch-Geometric" name one distribution (PEP 503). */
static int cgi_same_name(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    for (; i < an && j < bn; i++, j++) {
        char x = a[i] == '-' || a[i] == '.' ? '_' : (char)tolower((unsigned char)a[i]);
        char y = b[j] == '-' || b[j] == '.' ? '_' : (char)tolower((unsigned char)b[j]);
        if (x != y) return 0;
    }
    return i == an && j == bn;
}

/* Whether the dist-info's top_level.txt lists `top`. */
static int cgi_lists_top(const char *dir, const char *info, const char *top)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s/top_level.txt", dir, info) >= (int)sizeof path) return 0;
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    char line[256];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        found = strcmp(line, top) == 0;
    }
    fclose(f);
    return found;
}

int cgi_py_package(const char *file, cgi_py_pkg *out)
{
    memset(out, 0, sizeof *out);
    const char *at = NULL;
    for (const char *p = file; (p = strstr(p, "-packages/")) != NULL; p++)
        if (p - file >= 5 && (strncmp(p - 5, "/site", 5) == 0 || strncmp(p - 5, "/dist", 5) == 0)) at = p;
    if (!at) return 0;
    const char *name = at + strlen("-packages/");
    size_t n = strcspn(name, "/");
    if (!name[n] && n > 3 && strcmp(name + n - 3, ".py") == 0) n -= 3; /* a module of one file: six.py */
    if (!n || n >= sizeof out->package) return 0;
    memcpy(out->package, name, n);
    int dirlen = (int)(at + strlen("-packages") - file);
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%.*s", dirlen, file) >= (int)sizeof dir) return 1;
    DIR *d = opendir(dir);
    if (!d) return 1;
    struct dirent *e;
    for (int seen = 0; (e = readdir(d)) != NULL && seen < CGI_DIST_SCAN_MAX; seen++) {
        size_t len = strlen(e->d_name);
        if (len < 11 || strcmp(e->d_name + len - 10, ".dist-info") != 0) continue;
        /* NAME-VERSION.dist-info: NAME has no '-' (wheels escape it). */
        const char *dash = memchr(e->d_name, '-', len - 10);
        size_t nlen = dash ? (size_t)(dash - e->d_name) : len - 10;
        if (!cgi_same_name(e->d_name, nlen, out->package, n) && !cgi_lists_top(dir, e->d_name, out->package)) continue;
        snprintf(out->distribution, sizeof out->distribution, "%.*s", (int)nlen, e->d_name);
        if (dash) snprintf(out->version, sizeof out->version, "%.*s", (int)(len - 10 - nlen - 1), dash + 1);
        break;
    }
    closedir(d);
    return 1;
}

int cgi_stall_package(const cgi_stall *st, cgi_py_pkg *out)
{
    memset(out, 0, sizeof *out);
    return (st->py_file[0] && cgi_py_package(st->py_file, out)) ||
           (st->from_file[0] && cgi_py_package(st->from_file, out)) ||
           (st->import_file[0] && cgi_py_package(st->import_file, out));
}
