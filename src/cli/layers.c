/* Finding layers and reading what they say of themselves. A layer is a
 * shared object whose constructor registers with libcallguard: the CLI
 * dlopens it into its own process (RTLD_LOCAL) and asks cg_list_layers,
 * before the program starts. Installed layers are the files
 * libcallguard_NAME.so beside libcallguard; a layer from anywhere is named
 * by its path. A layer's soname shim, if it has one, is
 * DIR/callguard/shims/SONAME for a layer in DIR (the install layout:
 * lib/libcallguard_cl.so and lib/callguard/shims/libOpenCL.so.1). */
#define _GNU_SOURCE
#include "cli.h"
#include "../common/message.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cli_by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

size_t cli_installed_apis(char ***names)
{
    *names = NULL;
    size_t n = 0;
    DIR *d = opendir(cli_libdir);
    if (!d) return 0;
    struct dirent *e;
    const char *pre = "libcallguard_", *suf = ".so";
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name), lp = strlen(pre), ls = strlen(suf);
        if (len <= lp + ls || strncmp(e->d_name, pre, lp) != 0 || strcmp(e->d_name + len - ls, suf) != 0) continue;
        char **more = realloc(*names, (n + 1) * sizeof *more);
        if (!more) break;
        *names = more;
        (*names)[n++] = strndup(e->d_name + lp, len - lp - ls);
    }
    closedir(d);
    if (n) qsort(*names, n, sizeof **names, cli_by_name);
    return n;
}

static char *cli_installed_list(void)
{
    char **names;
    size_t n = cli_installed_apis(&names);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) exit(1);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? ", " : "", names[i]), free(names[i]);
    if (!n) fputs("none", f);
    fclose(f);
    free(names);
    return out;
}

/* The layer's shim: lib/callguard/shims/SONAME beside it, for the first of its sonames
 * (comma-separated, layer.h) that has one. */
static char *cli_shim_of(const char *file, const char *sonames)
{
    if (!sonames) return NULL;
    const char *slash = strrchr(file, '/');
    for (const char *s = sonames; *s;) {
        size_t n = strcspn(s, ",");
        char *shim;
        if (asprintf(&shim, "%.*s/callguard/shims/%.*s", (int)(slash - file), file, (int)n, s) < 0) exit(1);
        if (n && access(shim, R_OK) == 0) return shim;
        free(shim);
        s += n;
        if (*s) s++;
    }
    return NULL;
}

char *cli_shim_for(const cli_layer *l, const char *soname)
{
    if (!l->shim || strchr(soname, '/')) return NULL;
    const char *slash = strrchr(l->shim, '/');
    char *shim;
    if (asprintf(&shim, "%.*s/%s", (int)(slash - l->shim), l->shim, soname) < 0) exit(1);
    if (access(shim, R_OK) == 0) return shim;
    free(shim);
    return NULL;
}

/* The layer's file, resolved (malloc'd): path, or the installed layer of
 * api when path is NULL. NULL, said, when there is none. */
static char *cli_layer_file(const char *api, const char *path)
{
    char *given = NULL;
    if (!path) {
        if (asprintf(&given, "%s/libcallguard_%s.so", cli_libdir, api) < 0) exit(1);
        if (access(given, R_OK) != 0) {
            char *have = cli_installed_list();
            cgi_say("no %s layer is installed (%s); installed: %s; a layer from elsewhere: --layer PATH.so", api, given,
                    have);
            free(have), free(given);
            return NULL;
        }
        path = given;
    }
    char *file = realpath(path, NULL);
    if (!file) cgi_say("layer %s: %m", path);
    free(given);
    return file;
}

/* Loads file and returns what registered (malloc'd), [*first, *end) of
 * it being the file's layers; NULL, said, when it cannot be loaded or
 * registered none. */
static cg_layer_info *cli_layer_register(const char *file, long *first, long *end)
{
    long before = cg_list_layers(NULL, 0);
    if (!dlopen(file, RTLD_NOW | RTLD_LOCAL)) {
        cgi_say("cannot load %s: %s", file, dlerror());
        return NULL;
    }
    long after = cg_list_layers(NULL, 0);
    cg_layer_info *info = calloc((size_t)after + 1, sizeof *info);
    if (!info) exit(1);
    after = cg_list_layers(info, (size_t)after);
    if (after <= before) {
        /* Loaded already, and registered then: preloaded into this CLI by
         * an outer `callguard run`. */
        for (long k = 0; k < after; k++) {
            char *p = realpath(info[k].path, NULL);
            int same = p && strcmp(p, file) == 0;
            free(p);
            if (same) {
                before = k;
                after = k + 1;
                break;
            }
        }
    }
    if (after <= before) {
        cgi_say("%s is not a callguard layer (loading it registered none)", file);
        free(info);
        return NULL;
    }
    *first = before, *end = after;
    return info;
}

/* The file's layer li into the set: 0, or 2 (said) when it is for another
 * API than the one asked for, or the set has one for its API already. */
static int cli_layer_add(cli_layers *set, const char *api, const char *file, const cg_layer_info *li)
{
    if (api && strcmp(li->api, api) != 0) {
        cgi_say("%s is a layer for the %s API, not %s", file, li->api, api);
        return 2;
    }
    int rc = 0;
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->v[i].info.api, li->api) == 0) {
            cgi_say("two layers for the %s API: %s and %s", li->api, set->v[i].file, file);
            rc = 2;
        }
    if (rc) return rc;
    cli_layer *more = realloc(set->v, (set->n + 1) * sizeof *more);
    if (!more) exit(1);
    set->v = more;
    cli_layer *l = &set->v[set->n++];
    l->info = *li;
    l->file = strdup(file);
    l->shim = cli_shim_of(file, li->soname);
    return 0;
}

int cli_layer_load(cli_layers *set, const char *api, const char *path)
{
    char *file = cli_layer_file(api, path);
    if (!file) return 2;
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->v[i].file, file) == 0) { /* named twice */
            free(file);
            return 0;
        }
    long first = 0, end = 0;
    cg_layer_info *info = cli_layer_register(file, &first, &end);
    int rc = info ? 0 : 2;
    for (long k = first; k < end && rc == 0; k++)
        rc = cli_layer_add(set, api, file, &info[k]);
    free(info), free(file);
    return rc;
}

char *cli_layer_names(const cli_layers *set)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) exit(1);
    for (size_t i = 0; i < set->n; i++)
        fprintf(f, "%s%s", i ? ", " : "", set->v[i].info.api);
    if (!set->n) fputs("none", f);
    fclose(f);
    return out;
}

const cli_layer *cli_layer_for_library_var(const cli_layers *set, const char *var)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].info.library_env && strcmp(set->v[i].info.library_env, var) == 0) return &set->v[i];
    return NULL;
}
