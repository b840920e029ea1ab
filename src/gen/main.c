/* main.c: callguard-gen's command line. Reads a policy, parses its header,
 * and writes DIR/cg_<name>.c (and DIR/cg_<name>_passthrough.h when the
 * policy has pass-through names) atomically (a temporary file in DIR,
 * renamed over the target), so an error never leaves a partial or stale
 * layer. */
#include "gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "usage: callguard-gen POLICY.ini -o DIR [-I DIR]... [--header-dir DIR] [--stdout | --check]\n"
    "\n"
    "Generates DIR/cg_<name>.c, the callguard layer of the API that POLICY.ini\n"
    "describes ([api] name, header, prefix, library, ...; see docs), and\n"
    "DIR/cg_<name>_passthrough.h, its pass-through names, when it has any.\n"
    "\n"
    "  -o DIR            where the layer belongs (written there unless --stdout)\n"
    "  -I DIR            add DIR to the include path used to read the header\n"
    "                    (after the policy's cflags); may be repeated\n"
    "  --header-dir DIR  the directory holding the API header; searched like -I\n"
    "  --stdout          write the layer to standard output instead of DIR;\n"
    "                    the recorded command is unchanged, so the output can be\n"
    "                    compared with the committed file\n"
    "  --check           write nothing; exit 1 naming each file in DIR that\n"
    "                    differs from what would be written\n"
    "  --help            print this help\n"
    "\n"
    "Exit status: 0 done, 2 bad usage, policy or header, 1 cannot write (or,\n"
    "with --check, a file is not current).\n";

static int usage_error(const char *fmt, const char *arg)
{
    fputs("callguard-gen: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see callguard-gen --help)\n", stderr);
    return GEN_EXIT_INPUT;
}

/* How a path appears in the recorded command: as given when relative;
 * relative to the current directory when under it; else its last directory
 * and file name. The output must not depend on where the repository is. */
static char *display_path(const char *path)
{
    if (path[0] != '/') return xstrdup(path);
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd)) {
        size_t n = strlen(cwd);
        if (strncmp(path, cwd, n) == 0 && path[n] == '/' && path[n + 1]) return xstrdup(path + n + 1);
    }
    const char *p = path + strlen(path);
    for (int slashes = 0; p > path; p--)
        if (p[-1] == '/' && ++slashes == 2) break;
    while (*p == '/')
        p++;
    return xstrdup(p);
}

static char *append(char *s, const char *opt, const char *path)
{
    char *d = display_path(path);
    char *t = xasprintf("%s %s %s", s, opt, d);
    free(d);
    free(s);
    return t;
}

typedef struct gen_output {
    const policy *p;
    const gen_api *api;
    const char *command;
} gen_output;

static int emit_c(FILE *out, const gen_output *o) { return emit_layer(out, o->p, o->api, o->command); }
static int emit_list(FILE *out, const gen_output *o) { return emit_passthrough_list(out, o->p, o->api, o->command); }

/* Writes DIR/NAME atomically. */
static int write_file(const char *dir, const char *name, int (*emit)(FILE *, const gen_output *), const gen_output *o)
{
    char *target = xasprintf("%s/%s", dir, name);
    char *tmp = xasprintf("%s/.%s.XXXXXX", dir, name);
    int rc = 1;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "callguard-gen: cannot write in %s: %s\n", dir, strerror(errno));
        free(target);
        free(tmp);
        return 1;
    }
    FILE *out = fdopen(fd, "w");
    if (out && emit(out, o) == 0 && fchmod(fd, 0644) == 0 && fclose(out) == 0) {
        out = NULL;
        if (rename(tmp, target) == 0) rc = 0;
    }
    if (rc) {
        fprintf(stderr, "callguard-gen: cannot write %s: %s\n", target, strerror(errno));
        if (out) fclose(out);
        unlink(tmp);
    }
    free(target);
    free(tmp);
    return rc;
}

/* Is DIR/NAME what emit would write? Prints why not. */
static int check_file(const char *dir, const char *name, int (*emit)(FILE *, const gen_output *), const gen_output *o)
{
    char *want = NULL, *have = NULL;
    size_t nwant = 0, nhave = 0;
    FILE *mem = open_memstream(&want, &nwant);
    if (!mem || emit(mem, o) != 0) {
        fprintf(stderr, "callguard-gen: out of memory\n");
        exit(1);
    }
    fclose(mem);
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    int same = 0;
    if (f) {
        mem = open_memstream(&have, &nhave);
        char buf[65536];
        size_t n;
        while (mem && (n = fread(buf, 1, sizeof buf, f)) > 0)
            fwrite(buf, 1, n, mem);
        if (mem) fclose(mem);
        fclose(f);
        same = have && nhave == nwant && memcmp(have, want, nwant) == 0;
    }
    if (!same) fprintf(stderr, "callguard-gen: %s is %s\n", path, f ? "not current: regenerate it" : "missing");
    free(path);
    free(want);
    free(have);
    return !same;
}

static int write_layer(const char *dir, const gen_output *o, int check)
{
    int (*act)(const char *, const char *, int (*)(FILE *, const gen_output *), const gen_output *) =
        check ? check_file : write_file;
    char *c = xasprintf("cg_%s.c", o->p->name);
    char *list = xasprintf("cg_%s_passthrough.h", o->p->name);
    int rc = 0;
    /* The list first: a C file never names a list that is not there. A
     * list left from an earlier policy with pass-through names would make
     * the build assemble trampolines the layer no longer has. */
    char *list_path = xasprintf("%s/%s", dir, list);
    if (o->api->passthrough.n) {
        rc |= act(dir, list, emit_list, o);
    } else if (access(list_path, F_OK) == 0) {
        if (check) {
            fprintf(stderr, "callguard-gen: %s is no longer generated: remove it\n", list_path);
            rc = 1;
        } else if (unlink(list_path) != 0) {
            fprintf(stderr, "callguard-gen: cannot remove %s: %s\n", list_path, strerror(errno));
            rc = 1;
        }
    }
    free(list_path);
    if (!rc || check) rc |= act(dir, c, emit_c, o);
    free(c);
    free(list);
    return rc;
}

int main(int argc, char **argv)
{
    const char *policy_path = NULL, *outdir = NULL, *header_dir = NULL;
    strlist incdirs = {0};
    int to_stdout = 0, check = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "-I") == 0 || strcmp(a, "--header-dir") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0]) return usage_error("%s needs a directory", a);
            const char *v = argv[++i];
            if (a[1] == 'o') {
                if (outdir) return usage_error("%s: only one -o", "-o");
                outdir = v;
            } else if (a[1] == 'I') {
                strlist_push(&incdirs, v);
            } else {
                header_dir = v;
            }
        } else if (strncmp(a, "-I", 2) == 0) {
            strlist_push(&incdirs, a + 2);
        } else if (strcmp(a, "--stdout") == 0) {
            to_stdout = 1;
        } else if (strcmp(a, "--check") == 0) {
            check = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option %s", a);
        } else if (policy_path) {
            return usage_error("more than one policy file (%s)", a);
        } else {
            policy_path = a;
        }
    }
    if (!policy_path) return usage_error("%s", "no policy file given");
    if (!outdir) return usage_error("%s", "no output directory given: -o DIR");
    if (to_stdout && check) return usage_error("%s", "--stdout and --check: give one");

    /* The command line as recorded in the output: stable across machines. */
    char *command = xasprintf("callguard-gen");
    {
        char *d = display_path(policy_path);
        char *t = xasprintf("%s %s", command, d);
        free(d);
        free(command);
        command = t;
    }
    command = append(command, "-o", outdir);
    for (size_t i = 0; i < incdirs.n; i++)
        command = append(command, "-I", incdirs.v[i]);
    if (header_dir) command = append(command, "--header-dir", header_dir);

    /* The header directory is searched first, then the -I directories. */
    strlist search = {0};
    if (header_dir) strlist_push(&search, header_dir);
    for (size_t i = 0; i < incdirs.n; i++)
        strlist_push(&search, incdirs.v[i]);

    int rc = 0;
    policy p;
    gen_api api = {0};
    if (policy_read(policy_path, &p) || parse_api(&p, &search, &api) || check_policy(&p, &api)) {
        rc = GEN_EXIT_INPUT;
    } else if (api.nfuncs == 0) {
        fprintf(stderr, "%s: no entry points: %s declares no function with the prefix %s\n", policy_path, p.header,
                p.prefixes.v[0]);
        rc = GEN_EXIT_INPUT;
    } else if (to_stdout) {
        rc = emit_layer(stdout, &p, &api, command);
    } else {
        struct stat st;
        if (stat(outdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "callguard-gen: -o %s: not a directory\n", outdir);
            rc = GEN_EXIT_INPUT;
        } else {
            gen_output o = {&p, &api, command};
            rc = write_layer(outdir, &o, check);
        }
    }
    gen_api_free(&api);
    policy_free(&p);
    strlist_free(&incdirs);
    strlist_free(&search);
    free(command);
    return rc;
}
