/* The CALLGUARD_* variables. A bad value in the environment is reported in
 * one line on stderr and the process exits with status 2 before any guarded
 * call; through cg_configure it is an error code instead. */
#define _GNU_SOURCE
#include "environment.h"

#include "../common/errors.h"
#include "julia.h"
#include "../common/names.h"
#include "../report/outfile.h"
#include "policy_file.h"
#include "python.h"
#include "quirks.h"
#include "resolve.h"
#include "../common/secure_notice.h"
#include "../common/variables.h"
#include "../common/duration.h"
#include "settings.h"
#include "signals.h"
#include "site.h"
#include "stats.h"
#include "threads.h"
#include "trace.h"
#include "values.h"
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* FN[=DOMAIN][:process|:handle|:once|:shared][,...] */
static int cgi_parse_serialize_list(const char *value, const char *origin)
{
    char *copy = strdup(value), *save = NULL;
    if (!copy) return cgi_fail(CG_ENOMEM, "out of memory");
    int rc = CG_OK;
    if (!*value) rc = cgi_fail(CG_EINVAL, "empty value: expected FN[=DOMAIN][:process|:handle|:once|:shared][,...]");
    /* strtok_r would skip empty items: ",", "a,,b" and "a," are refused. */
    size_t len = strlen(value);
    if (len && (value[0] == ',' || value[len - 1] == ',' || strstr(value, ",,")))
        rc = cgi_fail(CG_EINVAL, "'%s': empty item: expected FN[=DOMAIN][:process|:handle|:once|:shared][,...]", value);
    for (char *item = strtok_r(copy, ",", &save); item && rc == CG_OK; item = strtok_r(NULL, ",", &save)) {
        cg_scope scope = CG_SCOPE_PROCESS;
        char *colon = strchr(item, ':');
        if (colon) {
            *colon = '\0';
            if (cgi_parse_scope(colon + 1, &scope) != CG_OK) {
                rc = cgi_fail(CG_EINVAL, "'%s': scope '%s': expected " CGI_SCOPE_CHOICES, value, colon + 1);
                break;
            }
        }
        char *eq = strchr(item, '=');
        const char *domain = item;
        if (eq) {
            *eq = '\0';
            domain = eq + 1;
        }
        if (!cgi_valid_site_name(item)) {
            rc = cgi_fail(
                CG_EINVAL,
                "'%s': '%s' is not an entry point name: expected FN[=DOMAIN][:process|:handle|:once|:shared][,...]",
                value, item);
            break;
        }
        cgi_setting *st = cgi_setting_add(CGI_SET_SERIALIZE, item, origin);
        st->domain = strdup(domain);
        st->scope = scope;
        if (!*domain) rc = cgi_fail(CG_EINVAL, "'%s': empty domain name after '%s='", value, item);
    }
    free(copy);
    return rc;
}

/* The runtime this process has, if any: CPython first (a Python program
 * that loads Julia later, through juliacall, has CPython at start-up; a
 * Julia program that loads Python later, through PyCall, has Julia). */
static const cg_adapter *cgi_runtime_detect(void)
{
    const cg_adapter *ad = cgi_cpython_adapter_if_present();
    return ad ? ad : cgi_julia_adapter_if_present();
}

int cgi_runtime_set_locked(const char *v)
{
    const cg_adapter *ad;
    cg_adapter_mode mode = CG_ADAPTER_ACTIVE;
    if (strcmp(v, "none") == 0) {
        ad = NULL;
    } else if (strcmp(v, "auto") == 0) {
        ad = cgi_runtime_detect();
        mode = CG_ADAPTER_DETECT;
    } else if (strcmp(v, "release") == 0) {
        /* With none found, CPython's: it looks the interpreter up at the
         * first call (what `callguard run --release-gil` always set). */
        ad = cgi_runtime_detect();
        if (!ad) ad = cg_adapter_cpython();
    } else if (strcmp(v, "cpython") == 0) {
        ad = cg_adapter_cpython();
    } else if (strcmp(v, "julia") == 0) {
        ad = cg_adapter_julia();
    } else {
        return cgi_fail(CG_EINVAL, "runtime '%s': expected auto, release, none, cpython or julia", v);
    }
    if (ad) atomic_store(&cgi_cfg.adapter_mode, mode);
    atomic_store(&cgi_cfg.adapter, ad);
    cgi_refresh_all();
    return CG_OK;
}

static char *cgi_report_path;

const char *cgi_env_report_path(void) { return cgi_report_path; }

/* A file written later (a report at exit): refused now when it could not
 * be, without creating it: a directory, a missing or unwritable parent. */
static int cgi_check_new_file(const char *path)
{
    char where[600];
    int e = cgi_outfile_check(path, where, sizeof where);
    if (e == EISDIR) return cgi_fail(CG_EINVAL, "'%s': is a directory, expected a file name", path);
    if (e == ENAMETOOLONG) return cgi_fail(CG_EINVAL, "'%s': cannot be created: %s", path, where);
    if (e) return cgi_fail(CG_EINVAL, "'%s': cannot create a file in %s: %s", path, where, strerror(e));
    return CG_OK;
}

/* Starts with the ELF magic: a library variable naming a text file is
 * refused when it is read, not when the first call cannot be made. */
static int cgi_is_elf_object(const char *path)
{
    char magic[4];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, magic, 4) == 4 &&
             memcmp(magic,
                    "\x7f"
                    "ELF",
                    4) == 0;
    close(fd);
    return ok;
}

/* CALLGUARD_<API>_SUFFIX, API in capitals, digits and '_': a layer's own
 * setting, accepted for every API, since the layer that reads it may be
 * dlopened much later. Only `callguard run`, which knows every layer before
 * the program starts, refuses one that no chosen layer reads. */
static int cgi_layer_var(const char *k, const char *suffix)
{
    size_t n = strlen(k), len = strlen(suffix);
    if (n <= len || strcmp(k + n - len, suffix) != 0) return 0;
    for (size_t i = 0; i < n - len; i++)
        if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_')) return 0;
    return 1;
}

/* ---- the variables ---------------------------------------------------------------
 * One row per CALLGUARD_* variable: its name, how its value is read, where
 * it goes, and whether it names a file. A value is read first, with its
 * reading's message when it cannot be; then the row's function takes it. */

/* A value read, handed to its row's function. */
typedef struct cgi_env_value {
    const char *var;  /* CALLGUARD_... */
    const char *text; /* the value as given */
    uint64_t n;       /* read as a number, a yes (1) or a word's index */
    int from_env;     /* read at start-up (cgi_configure_locked) */
} cgi_env_value;

typedef int cgi_set_fn(const cgi_env_value *v);

typedef struct cgi_env_var {
    const char *name; /* after CALLGUARD_; "_LIBRARY": every CALLGUARD_<API>_LIBRARY */
    cgi_read read;
    const char *words;    /* CGI_READ_WORD: the words, '|' between ("" is one too) */
    const char *expected; /* CGI_READ_WORD: what the message says is expected */
    cgi_names names;
} cgi_env_var;

/* Per-site settings (settings.c) added since `before`, or an error: read
 * at start-up, they are kept for the layers to come; from cg_configure,
 * checked against the loaded layers and applied. */
static int cgi_settings_end(cgi_setting **before, int rc, int from_env)
{
    if (rc != CG_OK) {
        cgi_settings_drop_from(before);
        return rc;
    }
    if (from_env) {
        cgi_settings_keep(before);
        return CG_OK;
    }
    return cgi_settings_commit(before);
}

static int cgi_set_serialize(const cgi_env_value *v)
{
    cgi_setting **before = cgi_settings_mark();
    return cgi_settings_end(before, cgi_parse_serialize_list(v->text, v->var), v->from_env);
}

static int cgi_set_transition(const cgi_env_value *v)
{
    cg_transition t = CG_TRANSITION_ALWAYS;
    int rc = cgi_parse_transition(v->text, &t);
    if (rc != CG_OK) return rc;
    cgi_setting **before = cgi_settings_mark();
    cgi_setting_add(CGI_SET_TRANSITION, NULL, v->var)->transition = t;
    return cgi_settings_end(before, CG_OK, v->from_env);
}

static int cgi_set_runtime(const cgi_env_value *v) { return cgi_runtime_set_locked(v->text); }

static int cgi_set_report(const cgi_env_value *v)
{
    if (!*v->text)
        return cgi_fail(CG_EINVAL, "empty value: expected a file name for a JSON report, or '-' for a table on stderr");
    int rc;
    if (strcmp(v->text, "-") != 0 && (rc = cgi_check_new_file(v->text)) != CG_OK) return rc;
    free(cgi_report_path);
    cgi_report_path = strdup(v->text);
    atomic_store(&cgi_cfg.stats_on, 1);
    cgi_refresh_all();
    return CG_OK;
}

static int cgi_set_trace(const cgi_env_value *v) { return cgi_trace_set_file(v->text); }
static int cgi_set_trace_lines(const cgi_env_value *v) { return cgi_trace_set_lines(v->text); }
static int cgi_set_trace_max(const cgi_env_value *v) { return cgi_trace_set_max(v->text); }
static int cgi_set_trace_args(const cgi_env_value *v)
{
    atomic_store(&cgi_trace_args_on, v->n == 0);
    cgi_refresh_all(); /* a traced site's path depends on it */
    return CG_OK;
}

static int cgi_set_stall(const cgi_env_value *v)
{
    atomic_store(&cgi_cfg.stall_ns, v->n * 1000000u);
    return CG_OK;
}

/* n: 0 sampled, 1 exact. */
static int cgi_set_timing(const cgi_env_value *v)
{
    int timing = v->n ? CGI_TIMING_EXACT : CGI_TIMING_SAMPLED;
    atomic_store(&cgi_cfg.timing, timing);
    if (cgi_stats) atomic_store(&cgi_stats->h.timing, timing);
    cgi_refresh_all();
    cgi_watchdog_start();
    return CG_OK;
}

/* A threshold sets both: the page is written, and printed, at that age;
 * off stops both (the page is kept at 1 s without the variable). */
static int cgi_set_hang(const cgi_env_value *v)
{
    atomic_store(&cgi_cfg.hang_ns, v->n * 1000000u);
    atomic_store(&cgi_cfg.record_ns, v->n * 1000000u);
    cgi_refresh_all();
    cgi_watchdog_start();
    return CG_OK;
}

static int cgi_set_signals(const cgi_env_value *v) { return cgi_signals_set(v->text, cgi_in_cli); }
static int cgi_set_policy(const cgi_env_value *v) { return cgi_policy_load_locked(v->text, v->from_env); }
static int cgi_set_quirks(const cgi_env_value *v) { return cgi_quirks_set_locked(v->text); }

/* A list, so later checks can join: today only threads. n: 0 threads, else none. */
static int cgi_set_check(const cgi_env_value *v)
{
    int rc = cgi_thr_set_check(v->n == 0);
    if (rc == CG_OK) cgi_refresh_all();
    return rc;
}

/* A test aid: holds each checked call open so overlaps show on few cores. */
static int cgi_set_check_hold(const cgi_env_value *v)
{
    cgi_thr_set_hold_ns(v->n * 1000u);
    return CG_OK;
}

static int cgi_set_serialize_handles(const cgi_env_value *v)
{
    int rc = cgi_thr_set_serialize(v->n != 0);
    if (rc == CG_OK) cgi_refresh_all();
    return rc;
}

/* `callguard run`'s to act on (src/cli/run_stuck.c): checked here, so a
 * bad value stops the run before the program starts, and kept by no one. */
static int cgi_set_stuck(const cgi_env_value *v)
{
    uint64_t ms;
    if (strcmp(v->text, "off") != 0 && !cgi_parse_duration(v->text, CGI_STUCK_MIN_MS, CGI_STUCK_MAX_MS, &ms))
        return cgi_fail(CG_EINVAL, "'%s': expected " CGI_STUCK_EXPECTED, v->text);
    return CG_OK;
}

/* report, abort, or a command run with the job's view on its stdin. */
static int cgi_set_on_stuck(const cgi_env_value *v)
{
    if (!v->text[strspn(v->text, " \t")])
        return cgi_fail(CG_EINVAL, "empty value: expected report, abort or a command (run with the view as JSON "
                                   "on its stdin)");
    return CG_OK;
}

/* Read by cgi_init before anything else. */
static int cgi_set_env_only(const cgi_env_value *v)
{
    if (!v->from_env) return cgi_fail(CG_EINVAL, "%s can only be set in the environment", v->var);
    return CG_OK;
}

static int cgi_set_library(const cgi_env_value *v)
{
    const char *p = v->text;
    if (p[0] != '/' || access(p, R_OK) != 0)
        return cgi_fail(CG_EINVAL, "'%s': expected the absolute path of a readable library%s%s", p,
                        p[0] == '/' ? ": " : "", p[0] == '/' ? strerror(errno) : "");
    if (!cgi_is_elf_object(p))
        return cgi_fail(
            CG_EINVAL, "'%s': not a shared library (no ELF header): expected the absolute path of the real library", p);
    if (!v->from_env) cgi_library_set(v->var, p);
    return CG_OK;
}

/* Every variable, in the order of common/settings.h. */
static const cgi_env_var cgi_env_vars[] = {
#define CGI_ENV_ROW(id, name, read, words, expected, names) {name, CGI_READ_##read, words, expected, CGI_NAMES_##names},
    CGI_SETTINGS(CGI_ENV_ROW)
#undef CGI_ENV_ROW
};

/* Where each value goes; none: read by the layer or libcallguard-load. */
static cgi_set_fn *const cgi_env_sets[CGI_NSETTINGS] = {
    [CGI_SETTING_SERIALIZE] = cgi_set_serialize,
    [CGI_SETTING_TRANSITION] = cgi_set_transition,
    [CGI_SETTING_RUNTIME] = cgi_set_runtime,
    [CGI_SETTING_REPORT] = cgi_set_report,
    [CGI_SETTING_TRACE] = cgi_set_trace,
    [CGI_SETTING_TRACE_LINES] = cgi_set_trace_lines,
    [CGI_SETTING_TRACE_MAX] = cgi_set_trace_max,
    [CGI_SETTING_TRACE_ARGS] = cgi_set_trace_args,
    [CGI_SETTING_STALL_MS] = cgi_set_stall,
    [CGI_SETTING_TIMING] = cgi_set_timing,
    [CGI_SETTING_HANG_MS] = cgi_set_hang,
    [CGI_SETTING_SIGNALS] = cgi_set_signals,
    [CGI_SETTING_POLICY] = cgi_set_policy,
    [CGI_SETTING_QUIRKS] = cgi_set_quirks,
    [CGI_SETTING_CHECK] = cgi_set_check,
    [CGI_SETTING_CHECK_HOLD_US] = cgi_set_check_hold,
    [CGI_SETTING_SERIALIZE_HANDLES] = cgi_set_serialize_handles,
    [CGI_SETTING_STUCK] = cgi_set_stuck,
    [CGI_SETTING_ON_STUCK] = cgi_set_on_stuck,
    [CGI_SETTING_STATS_DIR] = cgi_set_env_only,
    [CGI_SETTING_STATS_LOST] = cgi_set_env_only,
    [CGI_SETTING_LIBRARY] = cgi_set_library,
};

/* "unknown setting; expected one of CALLGUARD_SERIALIZE, _TRANSITION, ...":
 * the rows, in their order. */
static int cgi_env_unknown(void)
{
    char text[640];
    size_t n = (size_t)snprintf(text, sizeof text, "unknown setting; expected one of ");
    size_t last = sizeof cgi_env_vars / sizeof *cgi_env_vars - 1;
    for (size_t i = 0; i <= last && n < sizeof text; i++) {
        const char *name = cgi_env_vars[i].name, *sep = i == last ? " or " : ", ";
        if (i == 0)
            n += (size_t)snprintf(text + n, sizeof text - n, "CALLGUARD_%s", name);
        else if (name[0] != '_')
            n += (size_t)snprintf(text + n, sizeof text - n, "%s_%s", sep, name);
        else
            n += (size_t)snprintf(text + n, sizeof text - n, "%s_<API>%s%s", sep, name,
                                  cgi_env_vars[i - 1].name[0] == '_' ? "" : " (API in capitals: CALLGUARD_CL_LIBRARY)");
    }
    return cgi_fail(CG_EINVAL, "%s", text);
}

/* The row of a variable's name after CALLGUARD_, or NULL. */
static const cgi_env_var *cgi_env_find(const char *k)
{
    for (size_t i = 0; i < sizeof cgi_env_vars / sizeof cgi_env_vars[0]; i++) {
        const cgi_env_var *row = &cgi_env_vars[i];
        if (row->name[0] == '_' ? cgi_layer_var(k, row->name) : strcmp(k, row->name) == 0) return row;
    }
    return NULL;
}

static int cgi_read_us(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long us = strtoul(v, &end, 10);
    if (!*v || *end || errno || us > 1000000 || !(v[0] >= '0' && v[0] <= '9'))
        return cgi_fail(CG_EINVAL, "'%s': expected a whole number of microseconds from 0 to 1000000", v);
    *out = us;
    return CG_OK;
}

/* The index of v among the row's words. */
static int cgi_read_word(const cgi_env_var *row, const char *v, uint64_t *out)
{
    size_t len = strlen(v);
    const char *w = row->words;
    for (uint64_t i = 0;; i++) {
        size_t n = strcspn(w, "|");
        if (n == len && strncmp(w, v, n) == 0) {
            *out = i;
            return CG_OK;
        }
        if (!w[n]) return cgi_fail(CG_EINVAL, "'%s': expected %s", v, row->expected);
        w += n + 1;
    }
}

static int cgi_read_ms(const char *v, uint64_t *out)
{
    uint32_t ms = 0;
    int rc = cgi_parse_ms(v, &ms);
    *out = ms;
    return rc;
}

/* Reads v->text as the row says, into v->n. */
static int cgi_env_value_read(const cgi_env_var *row, cgi_env_value *v)
{
    int on = 0, rc;
    switch (row->read) {
    case CGI_READ_MS_OFF:
        if (strcmp(v->text, "off") == 0 || strcmp(v->text, "0") == 0) return CG_OK;
        if (cgi_read_ms(v->text, &v->n) != CG_OK)
            return cgi_fail(CG_EINVAL, "'%s': expected a whole number of milliseconds from 1 to 3600000, or off",
                            v->text);
        return CG_OK;
    case CGI_READ_MS: return cgi_read_ms(v->text, &v->n);
    case CGI_READ_US: return cgi_read_us(v->text, &v->n);
    case CGI_READ_BOOL:
        rc = cgi_parse_bool(v->text, &on);
        v->n = (uint64_t)on;
        return rc;
    case CGI_READ_WORD: return cgi_read_word(row, v->text, &v->n);
    default: return CG_OK; /* CGI_READ_TEXT */
    }
}

/* Applies one CALLGUARD_* variable. Per-site ones are recorded and applied
 * to layers already registered and to those that register later. */
int cgi_configure_locked(const char *var, const char *v, int from_env)
{
    if (strncmp(var, "CALLGUARD_", 10) != 0)
        return cgi_fail(CG_EINVAL, "'%s' is not a callguard setting (expected CALLGUARD_...)", var);
    const cgi_env_var *row = cgi_env_find(var + 10);
    if (!row) return cgi_env_unknown();
    cgi_env_value value = {.var = var, .text = v, .from_env = from_env};
    int rc = cgi_env_value_read(row, &value);
    cgi_set_fn *set = cgi_env_sets[row - cgi_env_vars];
    if (rc != CG_OK || !set) return rc;
    return set(&value);
}

int cgi_secure(void) { return getauxval(AT_SECURE) != 0; }

/* Variables that name a file, a directory or a library: in a process
 * started with raised privilege (setuid, setgid, file capabilities) they
 * come from the less privileged user who started it, so they would let
 * that user load code or write files with the raised privilege. "-" (a
 * table or lines on stderr) names no file. The module cache's three go too:
 * its folder holds code the process runs, and its size decides what its
 * eviction removes (libcallguard-load ignores them there: docs/security.md). */
static int cgi_names_path(const char *var, const char *v)
{
    const cgi_env_var *row = cgi_env_find(var + 10);
    switch (row ? row->names : CGI_NAMES_NOTHING) {
    case CGI_NAMES_FILE: return 1;
    case CGI_NAMES_FILE_OR_DASH: return strcmp(v, "-") != 0;
    case CGI_NAMES_FILE_OR_OFF: return strcmp(v, "off") != 0;
    default: return 0;
    }
}

void cgi_env_read(void)
{
    int secure = cgi_secure();
    char ignored[512] = "";
    size_t used = 0;
    /* The policy file first, then the rest of the environment: later wins. */
    const char *policy = getenv("CALLGUARD_POLICY");
    if (policy && !secure && cgi_configure_locked("CALLGUARD_POLICY", policy, 1) != CG_OK)
        cgi_die("CALLGUARD_POLICY=%s: %s", policy, cg_last_error());
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "CALLGUARD_", 10) != 0) continue;
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        char *var = strndup(*e, (size_t)(eq - *e));
        if (!var) cgi_die("out of memory");
        if (secure && cgi_names_path(var, eq + 1)) {
            int w = snprintf(ignored + used, sizeof ignored - used, "%s%s", used ? ", " : "", var);
            if (w > 0 && (size_t)w < sizeof ignored - used) used += (size_t)w;
        } else if (strcmp(var, "CALLGUARD_POLICY") != 0 && cgi_configure_locked(var, eq + 1, 1) != CG_OK) {
            cgi_die("%s=%s: %s", var, eq + 1, cg_last_error());
        }
        free(var);
    }
    if (used) cgi_say(CGI_SECURE_NOTICE, ignored);
}
