/* The CALLGUARD_* variables. A bad value in the environment is reported in
 * one line on stderr and the process exits with status 2 before any guarded
 * call; through cg_configure it is an error code instead. */
#define _GNU_SOURCE
#include "environment.h"

#include "../common/errors.h"
#include "julia.h"
#include "../report/outfile.h"
#include "policy_file.h"
#include "python.h"
#include "quirks.h"
#include "resolve.h"
#include "../common/secure_notice.h"
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

/* FN[=DOMAIN][:process|:handle][,...] */
static int cgi_parse_serialize_list(const char *value, const char *origin)
{
    char *copy = strdup(value), *save = NULL;
    if (!copy) return cgi_fail(CG_ENOMEM, "out of memory");
    int rc = CG_OK;
    if (!*value) rc = cgi_fail(CG_EINVAL, "empty value: expected FN[=DOMAIN][:process|:handle][,...]");
    /* strtok_r would skip empty items: ",", "a,,b" and "a," are refused. */
    size_t len = strlen(value);
    if (len && (value[0] == ',' || value[len - 1] == ',' || strstr(value, ",,")))
        rc = cgi_fail(CG_EINVAL, "'%s': empty item: expected FN[=DOMAIN][:process|:handle][,...]", value);
    for (char *item = strtok_r(copy, ",", &save); item && rc == CG_OK; item = strtok_r(NULL, ",", &save)) {
        cg_scope scope = CG_SCOPE_PROCESS;
        char *colon = strchr(item, ':');
        if (colon) {
            *colon = '\0';
            if (cgi_parse_scope(colon + 1, &scope) != CG_OK) {
                rc = cgi_fail(CG_EINVAL, "'%s': scope '%s': expected process or handle", value, colon + 1);
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
            rc = cgi_fail(CG_EINVAL,
                          "'%s': '%s' is not an entry point name: expected FN[=DOMAIN][:process|:handle][,...]", value,
                          item);
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

static int cgi_library_var(const char *k) { return cgi_layer_var(k, "_LIBRARY"); }

/* Applies one CALLGUARD_* variable. Per-site ones are recorded and applied
 * to layers already registered and to those that register later. */
int cgi_configure_locked(const char *var, const char *v, int from_env)
{
    if (strncmp(var, "CALLGUARD_", 10) != 0)
        return cgi_fail(CG_EINVAL, "'%s' is not a callguard setting (expected CALLGUARD_...)", var);
    const char *k = var + 10;
    int rc = CG_OK;
    if (strcmp(k, "SERIALIZE") == 0) {
        cgi_setting **before = cgi_settings_mark();
        rc = cgi_parse_serialize_list(v, var);
        if (rc != CG_OK)
            cgi_settings_drop_from(before);
        else if (from_env)
            cgi_settings_keep(before);
        else
            rc = cgi_settings_commit(before);
    } else if (strcmp(k, "TRANSITION") == 0) {
        cg_transition t = CG_TRANSITION_ALWAYS;
        rc = cgi_parse_transition(v, &t);
        if (rc == CG_OK) {
            cgi_setting **before = cgi_settings_mark();
            cgi_setting_add(CGI_SET_TRANSITION, NULL, var)->transition = t;
            if (from_env)
                cgi_settings_keep(before);
            else
                rc = cgi_settings_commit(before);
        }
    } else if (strcmp(k, "RUNTIME") == 0) {
        rc = cgi_runtime_set_locked(v);
    } else if (strcmp(k, "REPORT") == 0) {
        if (!*v)
            return cgi_fail(CG_EINVAL,
                            "empty value: expected a file name for a JSON report, or '-' for a table on stderr");
        if (strcmp(v, "-") != 0 && (rc = cgi_check_new_file(v)) != CG_OK) return rc;
        free(cgi_report_path);
        cgi_report_path = strdup(v);
        atomic_store(&cgi_cfg.stats_on, 1);
        cgi_refresh_all();
    } else if (strcmp(k, "TRACE") == 0) {
        rc = cgi_trace_set_file(v);
    } else if (strcmp(k, "TRACE_LINES") == 0) {
        rc = cgi_trace_set_lines(v);
    } else if (strcmp(k, "STALL_MS") == 0) {
        uint32_t ms = 0;
        rc = cgi_parse_ms(v, &ms);
        if (rc == CG_OK) atomic_store(&cgi_cfg.stall_ns, (uint64_t)ms * 1000000u);
    } else if (strcmp(k, "TIMING") == 0) {
        int exact;
        if (strcmp(v, "sampled") == 0)
            exact = 0;
        else if (strcmp(v, "exact") == 0)
            exact = 1;
        else
            return cgi_fail(CG_EINVAL,
                            "'%s': expected sampled (the watchdog times calls by sampling) or exact (every call "
                            "reads the clock)",
                            v);
        atomic_store(&cgi_cfg.timing, exact ? CGI_TIMING_EXACT : CGI_TIMING_SAMPLED);
        if (cgi_stats) atomic_store(&cgi_stats->h.timing, exact ? CGI_TIMING_EXACT : CGI_TIMING_SAMPLED);
        cgi_refresh_all();
        cgi_watchdog_start();
    } else if (strcmp(k, "HANG_MS") == 0) {
        uint32_t ms = 0;
        rc = strcmp(v, "off") == 0 || strcmp(v, "0") == 0 ? CG_OK : cgi_parse_ms(v, &ms);
        if (rc == CG_OK) {
            atomic_store(&cgi_cfg.hang_ns, (uint64_t)ms * 1000000u);
            cgi_refresh_all();
            cgi_watchdog_start();
        }
    } else if (strcmp(k, "SIGNALS") == 0) {
        rc = cgi_signals_set(v, cgi_in_cli);
    } else if (strcmp(k, "CHECK") == 0) {
        /* A list, so later checks can join: today only threads. */
        if (strcmp(v, "threads") == 0)
            rc = cgi_thr_set_check(1);
        else if (strcmp(v, "none") == 0 || !*v)
            rc = cgi_thr_set_check(0);
        else
            return cgi_fail(CG_EINVAL, "'%s': expected threads (check the thread rules) or none", v);
        if (rc == CG_OK) cgi_refresh_all();
    } else if (strcmp(k, "CHECK_HOLD_US") == 0) {
        /* A test aid: holds each checked call open so overlaps show on few cores. */
        char *end;
        errno = 0;
        unsigned long us = strtoul(v, &end, 10);
        if (!*v || *end || errno || us > 1000000 || !(v[0] >= '0' && v[0] <= '9'))
            return cgi_fail(CG_EINVAL, "'%s': expected a whole number of microseconds from 0 to 1000000", v);
        cgi_thr_set_hold_ns((uint64_t)us * 1000u);
    } else if (strcmp(k, "SERIALIZE_HANDLES") == 0) {
        int on = 0;
        rc = cgi_parse_bool(v, &on);
        if (rc == CG_OK) rc = cgi_thr_set_serialize(on);
        if (rc == CG_OK) cgi_refresh_all();
    } else if (strcmp(k, "POLICY") == 0) {
        rc = cgi_policy_load_locked(v, from_env);
    } else if (strcmp(k, "QUIRKS") == 0) {
        rc = cgi_quirks_set_locked(v);
    } else if (strcmp(k, "STATS_DIR") == 0 || strcmp(k, "STATS_LOST") == 0) {
        if (!from_env) return cgi_fail(CG_EINVAL, "%s can only be set in the environment", var);
        /* handled by cgi_init before anything else */
    } else if (strcmp(k, "CACHE") == 0 || strcmp(k, "CACHE_DIR") == 0 || strcmp(k, "CACHE_SIZE") == 0) {
        /* libcallguard_load's module cache reads (and checks) these (docs/load.md) */
    } else if (cgi_library_var(k)) {
        if (v[0] != '/' || access(v, R_OK) != 0)
            return cgi_fail(CG_EINVAL, "'%s': expected the absolute path of a readable library%s%s", v,
                            v[0] == '/' ? ": " : "", v[0] == '/' ? strerror(errno) : "");
        if (!cgi_is_elf_object(v))
            return cgi_fail(CG_EINVAL,
                            "'%s': not a shared library (no ELF header): expected the absolute path of the "
                            "real library",
                            v);
        if (!from_env) cgi_library_set(var, v);
    } else if (cgi_layer_var(k, "_THREADS")) {
        /* The API's own thread support: used as the library gives it, or
         * every call serialized by the layer (MPI's: docs/mpi.md). Read by
         * the layer; a layer that has no such fix never reads it. */
        if (strcmp(v, "library") != 0 && strcmp(v, "serialize") != 0)
            return cgi_fail(CG_EINVAL, "'%s': expected library or serialize", v);
    } else {
        return cgi_fail(
            CG_EINVAL,
            "unknown setting; expected one of CALLGUARD_SERIALIZE, _TRANSITION, _RUNTIME, _REPORT, _TRACE, "
            "_TRACE_LINES, _STALL_MS, _TIMING, _HANG_MS, _SIGNALS, _POLICY, _QUIRKS, _CHECK, _CHECK_HOLD_US, "
            "_SERIALIZE_HANDLES, _STATS_DIR, _STATS_LOST, _CACHE, _CACHE_DIR, _CACHE_SIZE, "
            "_<API>_LIBRARY (API in capitals: CALLGUARD_CL_LIBRARY) or _<API>_THREADS");
    }
    return rc;
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
    const char *k = var + 10;
    if (strcmp(k, "POLICY") == 0 || strcmp(k, "STATS_DIR") == 0 || strcmp(k, "STATS_LOST") == 0) return 1;
    if (strcmp(k, "CACHE") == 0 || strcmp(k, "CACHE_DIR") == 0 || strcmp(k, "CACHE_SIZE") == 0) return 1;
    if (strcmp(k, "QUIRKS") == 0) return strcmp(v, "off") != 0;
    if (strcmp(k, "REPORT") == 0 || strcmp(k, "TRACE") == 0 || strcmp(k, "TRACE_LINES") == 0)
        return strcmp(v, "-") != 0;
    return cgi_library_var(k);
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
