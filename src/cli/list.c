/* callguard list [NAME | PATH.so]: what a layer is and its entry points
 * with their policies; with no argument, the layers installed. */
#define _GNU_SOURCE
#include "cli.h"

#include <callguard/layer.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../common/names.h"

static void list_describe(const cli_layer *l)
{
    const cg_layer_info *i = &l->info;
    printf("layer %s: %s\n", i->api, l->file);
    printf("  prefixes %s; header %s\n", i->prefixes, i->header ? i->header : "-");
    if (i->soname) printf("  stands in for %s\n  shim %s\n", i->soname, l->shim ? l->shim : "none");
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
    printf("%zu layer%s installed in %s\n", set.n, set.n == 1 ? "" : "s", cli_libdir);
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

/* ":handle", ":once" or ":shared" after a serialized site's domain, as --serialize spells it. */
static const char *scope_suffix(const cg_site_info *s)
{
    if (!s->domain[0]) return "";
    return s->scope == CG_SCOPE_HANDLE   ? ":handle"
           : s->scope == CG_SCOPE_ONCE   ? ":once"
           : s->scope == CG_SCOPE_SHARED ? ":shared"
                                         : "";
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

/* The width of the lines: COLUMNS as a shell exports it, else the
 * terminal's, else 100; at most 100 (the report's rule) and at least 60. */
static int list_width(void)
{
    const char *env = getenv("COLUMNS");
    char *end;
    long cols = env && *env ? strtol(env, &end, 10) : 0;
    struct winsize ws;
    if (!(env && *env && !*end && cols > 0))
        cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 100;
    return cols > 100 ? 100 : cols < 60 ? 60 : (int)cols;
}

/* "    LABEL: TEXT", words carried over to lines indented further at the width. */
static void list_more(const char *label, const char *text, int width)
{
    int col = printf("    %s:", label), indent = 8;
    while (*text) {
        size_t n = strcspn(text, " ");
        if (col + 1 + (int)n > width && col > indent)
            col = printf("\n%*s", indent, "") - 1;
        else
            col += printf(" ");
        col += printf("%.*s", (int)n, text);
        text += n;
        text += strspn(text, " ");
    }
    putchar('\n');
}

/* The table of a layer's entry points within the width: name, transition,
 * serialize, thread rules and what a blocking entry point waits for, in
 * columns where they fit; the thread rules where their column does not,
 * and a reason that does not, on lines of their own under the row
 * ("(below)"). 0, or 1 out of memory. */
static int list_sites(const cg_site_info *s, long n)
{
    int width = list_width(), nw = 11, sw = 9, rw = 12, rc = 0;
    char **rules = calloc((size_t)n + 1, sizeof *rules), **names = calloc((size_t)n + 1, sizeof *names),
         **sers = calloc((size_t)n + 1, sizeof *sers);
    if (!rules || !names || !sers) rc = 1;
    for (long i = 0; i < n && !rc; i++) {
        if (!(rules[i] = list_rules(&s[i])) ||
            (s[i].variant_of ? asprintf(&names[i], "%s (as %s)", s[i].name, s[i].variant_of)
                             : asprintf(&names[i], "%s", s[i].name)) < 0 ||
            asprintf(&sers[i], "%s%s", s[i].domain[0] ? s[i].domain : "-", scope_suffix(&s[i])) < 0) {
            names[i] = sers[i] = NULL, rc = 1;
            break;
        }
        int w = (int)strlen(names[i]);
        nw = w > nw && w <= width / 2 ? w : nw; /* a longer name has a line of its own */
        sw = (int)strlen(sers[i]) > sw ? (int)strlen(sers[i]) : sw;
        rw = (int)strlen(rules[i]) > rw ? (int)strlen(rules[i]) : rw;
    }
    int inline_rules = nw + 1 + 10 + 1 + sw + 1 + rw <= width; /* else under the row, where not "-" */
    if (!rc)
        printf("%-*s %-10s %-*s %s%s\n", nw, "entry point", "transition", sw, "serialize",
               inline_rules ? "thread rules " : "", "blocking reason");
    for (long i = 0; i < n && !rc; i++) {
        if ((int)strlen(names[i]) > nw) printf("%s\n", names[i]);
        int col = printf("%-*s %-10s %-*s ", nw, (int)strlen(names[i]) > nw ? "" : names[i],
                         cgi_transition_name(s[i].transition), sw, sers[i]);
        if (inline_rules) col += printf("%-*s ", rw, rules[i]);
        const char *why = s[i].blocking ? s[i].reason : "-";
        int below = col + (int)strlen(why) > width; /* the reason on a line of its own */
        printf("%s\n", below ? "(below)" : why);
        if (!inline_rules && strcmp(rules[i], "-") != 0) list_more("thread rules", rules[i], width);
        if (below) list_more("blocks", why, width);
    }
    if (!rc) printf("%ld entry points\n", n);
    for (long i = 0; i < n; i++)
        free(rules ? rules[i] : NULL), free(names ? names[i] : NULL), free(sers ? sers[i] : NULL);
    free(rules), free(names), free(sers);
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
