/* main.c: callguard-gen's command line. Reads a policy, parses its header,
 * and writes DIR/cg_<name>.c (and DIR/cg_<name>_passthrough.h when the
 * policy has pass-through names) atomically (a temporary file in DIR,
 * renamed over the target), so an error never leaves a partial or stale
 * layer. */
#include "clang.h"
#include "gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] = "usage: callguard-gen POLICY.ini -o DIR [-I DIR]... [--header-dir DIR] [--abi-dir DIR]...\n"
                            "                     [--stdout | --check]\n"
                            "\n"
                            "Generates DIR/cg_<name>.c, the callguard layer of the API that POLICY.ini\n"
                            "describes ([api] name, header, prefix, library, ...; see docs), and\n"
                            "DIR/cg_<name>_passthrough.h, its pass-through names, when it has any.\n"
                            "\n"
                            "  -o DIR            where the layer belongs (written there unless --stdout)\n"
                            "  -I DIR            add DIR to the include path used to read the header\n"
                            "                    (after the policy's cflags); may be repeated\n"
                            "  --header-dir DIR  the directory holding the API header; searched like -I\n"
                            "  --abi-dir DIR     where the policy's abi_headers (the API's other ABIs) are;\n"
                            "                    they are read on these folders alone; may be repeated\n"
                            "  --stdout          write the layer to standard output instead of DIR;\n"
                            "                    the recorded command is unchanged, so the output can be\n"
                            "                    compared with the committed file\n"
                            "  --check           write nothing; exit 1 naming each file in DIR that\n"
                            "                    differs from what would be written\n"
                            "  --help            print this help\n"
                            "\n"
                            "Exit status: 0 done, 2 bad usage, policy or header (or no libclang), 1 cannot\n"
                            "write (or, with --check, a file is not current).\n"
                            "\n"
                            "Environment: CALLGUARD_LIBCLANG=PATH, the libclang to load (the Python\n"
                            "package's callguard-gen; otherwise PyPI's libclang beside it, then the\n"
                            "system's); CALLGUARD_CLANG_RESOURCE_INCLUDE=DIR, clang's builtin headers.\n";

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

/* The command line. */
typedef struct gen_args {
    const char *policy_path, *outdir, *header_dir;
    strlist incdirs, abidirs;
    int to_stdout, check;
} gen_args;

/* Reads the command line into a; returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, gen_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "-I") == 0 || strcmp(arg, "--header-dir") == 0 ||
                   strcmp(arg, "--abi-dir") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0]) return usage_error("%s needs a directory", arg);
            const char *v = argv[++i];
            if (arg[1] == 'o') {
                if (a->outdir) return usage_error("%s: only one -o", "-o");
                a->outdir = v;
            } else if (arg[1] == 'I') {
                strlist_push(&a->incdirs, v);
            } else if (arg[2] == 'a') {
                strlist_push(&a->abidirs, v);
            } else {
                a->header_dir = v;
            }
        } else if (strncmp(arg, "-I", 2) == 0) {
            strlist_push(&a->incdirs, arg + 2);
        } else if (strcmp(arg, "--stdout") == 0) {
            a->to_stdout = 1;
        } else if (strcmp(arg, "--check") == 0) {
            a->check = 1;
        } else if (arg[0] == '-' && arg[1]) {
            return usage_error("unknown option %s", arg);
        } else if (a->policy_path) {
            return usage_error("more than one policy file (%s)", arg);
        } else {
            a->policy_path = arg;
        }
    }
    if (!a->policy_path) return usage_error("%s", "no policy file given");
    if (!a->outdir) return usage_error("%s", "no output directory given: -o DIR");
    if (a->to_stdout && a->check) return usage_error("%s", "--stdout and --check: give one");
    return -1;
}

/* The command line as recorded in the output: stable across machines. */
static char *recorded_command(const gen_args *a)
{
    char *command = xasprintf("callguard-gen");
    {
        char *d = display_path(a->policy_path);
        char *t = xasprintf("%s %s", command, d);
        free(d);
        free(command);
        command = t;
    }
    command = append(command, "-o", a->outdir);
    for (size_t i = 0; i < a->incdirs.n; i++)
        command = append(command, "-I", a->incdirs.v[i]);
    if (a->header_dir) command = append(command, "--header-dir", a->header_dir);
    for (size_t i = 0; i < a->abidirs.n; i++)
        command = append(command, "--abi-dir", a->abidirs.v[i]);
    return command;
}

/* Reads the policy and its header, then writes, prints or checks the layer. */
static int generate(const gen_args *a, const strlist *search, const char *command)
{
    int rc = 0;
    policy p;
    gen_api api = {0};
    if (policy_read(a->policy_path, &p) || parse_api(&p, search, &api) || abi_merge(&p, &a->abidirs, &api) ||
        check_policy(&p, &api)) {
        rc = GEN_EXIT_INPUT;
    } else if (api.nfuncs == 0) {
        fprintf(stderr, "%s: no entry points: %s declares no function with the prefix %s\n", a->policy_path, p.header,
                p.prefixes.v[0]);
        rc = GEN_EXIT_INPUT;
    } else if (a->to_stdout) {
        rc = emit_layer(stdout, &p, &api, command);
    } else {
        struct stat st;
        if (stat(a->outdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "callguard-gen: -o %s: not a directory\n", a->outdir);
            rc = GEN_EXIT_INPUT;
        } else {
            gen_output o = {&p, &api, command};
            rc = write_layer(a->outdir, &o, a->check);
        }
    }
    gen_api_free(&api);
    policy_free(&p);
    return rc;
}

int main(int argc, char **argv)
{
    gen_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    if (gen_clang_load()) return GEN_EXIT_INPUT;
    char *command = recorded_command(&a);
    /* The header directory is searched first, then the -I directories. */
    strlist search = {0};
    if (a.header_dir) strlist_push(&search, a.header_dir);
    for (size_t i = 0; i < a.incdirs.n; i++)
        strlist_push(&search, a.incdirs.v[i]);
    rc = generate(&a, &search, command);
    strlist_free(&a.incdirs);
    strlist_free(&a.abidirs);
    strlist_free(&search);
    free(command);
    return rc;
}
