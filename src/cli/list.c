/* callguard list [NAME | PATH.so]: what a layer is and its entry points
 * with their policies; with no argument, the layers installed. */
#define _GNU_SOURCE
#include "cli.h"

#include <callguard/layer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/names.h"

static void list_describe(const cli_layer *l)
{
    const cg_layer_info *i = &l->info;
    printf("layer %s: %s\n", i->api, l->file);
    printf("  prefixes %s; header %s\n", i->prefixes, i->header ? i->header : "-");
    if (i->soname) printf("  stands in for %s; shim %s\n", i->soname, l->shim ? l->shim : "none");
    printf("  real library: %s, else %s\n", i->library_env,
           i->library_path ? i->library_path
           : i->soname     ? i->soname
                           : "-");
}

static int list_layers_installed(void)
{
    char **names;
    size_t n = cli_installed_apis(&names);
    cli_layers set = {0};
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (cli_layer_load(&set, names[i], NULL) != 0) rc = 2;
        free(names[i]);
    }
    free(names);
    for (size_t i = 0; i < set.n; i++)
        list_describe(&set.v[i]);
    printf("%zu layers installed in %s\n", set.n, cli_libdir);
    return rc;
}

/* --help, or an option list does not have: the exit status; else -1. */
static int list_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return cli_help("list");
        else if (argv[i][0] == '-')
            return cli_usage_error("list: unknown option '%s': expected a layer's NAME or PATH.so, or --help", argv[i]);
    return -1;
}

/* ":handle" or ":once" after a serialized site's domain, as --serialize spells it. */
static const char *scope_suffix(const cg_site_info *s)
{
    if (!s->domain[0]) return "";
    return s->scope == CG_SCOPE_HANDLE ? ":handle" : s->scope == CG_SCOPE_ONCE ? ":once" : "";
}

/* A site's thread rules as the policy keys spell them ("writes=kernel
 * sets=kernel", "-" for none), or NULL out of memory. */
static char *list_rules(const cg_site_info *s)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    if (!f) return NULL;
    int any = 0;
    for (int k = 0; k < CGI_NRULE_KEYS; k++) {
        int first = 1;
        for (unsigned r = 0; r < s->nrules; r++) {
            if (!cgi_rule_has_key(s->rules[r].access, k)) continue;
            fprintf(f, first ? "%s%s=" : ",", any ? " " : "", cgi_rule_keys[k]);
            fputs(s->rules[r].param, f);
            first = 0, any = 1;
        }
    }
    if (!any) fputc('-', f);
    return fclose(f) == 0 ? text : (free(text), NULL);
}

/* The table of a layer's entry points: name, transition, serialize, thread
 * rules, blocking reason; 0, or 1 out of memory. */
static int list_sites(const cg_site_info *s, long n)
{
    int width = 40, rwidth = 12, rc = 0;
    char **rules = calloc((size_t)n + 1, sizeof *rules);
    if (!rules) return 1;
    for (long i = 0; i < n && !rc; i++) {
        int w = (int)strlen(s[i].name) + (s[i].variant_of ? (int)strlen(s[i].variant_of) + 6 : 0);
        if (w > width) width = w;
        if (!(rules[i] = list_rules(&s[i])))
            rc = 1;
        else if ((int)strlen(rules[i]) > rwidth)
            rwidth = (int)strlen(rules[i]);
    }
    if (!rc)
        printf("%-*s %-10s %-16s %-*s %s\n", width, "entry point", "transition", "serialize", rwidth, "thread rules",
               "blocking reason");
    for (long i = 0; i < n && !rc; i++) {
        char *name = NULL, *ser = NULL;
        if ((s[i].variant_of ? asprintf(&name, "%s (as %s)", s[i].name, s[i].variant_of)
                             : asprintf(&name, "%s", s[i].name)) < 0 ||
            asprintf(&ser, "%s%s", s[i].domain[0] ? s[i].domain : "-", scope_suffix(&s[i])) < 0) {
            rc = 1;
            break;
        }
        printf("%-*s %-10s %-16s %-*s %s\n", width, name, cgi_transition_name(s[i].transition), ser, rwidth, rules[i],
               s[i].blocking ? s[i].reason : "-");
        free(name), free(ser);
    }
    if (!rc) printf("%ld entry points\n", n);
    for (long i = 0; i < n; i++)
        free(rules[i]);
    free(rules);
    return rc;
}

int cli_cmd_list(int argc, char **argv)
{
    int rc = list_options(argc, argv);
    if (rc >= 0) return rc;
    if (argc == 1) return list_layers_installed();
    if (argc != 2) return cli_usage_error("list: expected one layer: an installed API's name or a layer's path");
    const char *arg = argv[1];
    size_t len = strlen(arg);
    int is_path = strchr(arg, '/') != NULL || (len > 3 && strcmp(arg + len - 3, ".so") == 0);
    cli_layers set = {0};
    if (cli_layer_load(&set, is_path ? NULL : arg, is_path ? arg : NULL) != 0) return 2;
    const cli_layer *l = &set.v[0];
    list_describe(l);
    long n = cg_list_sites(l->info.api, NULL, 0);
    cg_site_info *s = calloc((size_t)n + 1, sizeof *s);
    if (!s) return 1;
    n = cg_list_sites(l->info.api, s, (size_t)n);
    rc = list_sites(s, n);
    free(s);
    return rc;
}
