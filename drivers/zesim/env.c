/*
 * CGSIM_* environment configuration.
 *
 * A CI job that mistypes a knob should find out at once rather than silently run with defaults, so every
 * variable whose name starts with CGSIM_ must be known and have a valid value; otherwise one line per problem is
 * printed to stderr and driver initialisation fails.
 */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

#define ACCEPTED_NAMES                                                                                                 \
    "CGSIM_DEVICES, CGSIM_COMPILE_MS, CGSIM_KERNEL_US, CGSIM_COMPILER_RACE, CGSIM_DRIVER_VERSION, CGSIM_VENDOR_ID, "   \
    "CGSIM_DEVICE_NAME"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct cgsim_config parsed;
static bool parsed_ok;

/* Accepts only plain decimal digits (no sign, no spaces, no suffix) within [lo, hi]. */
static bool parse_u64(const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (*text == '\0') return false;
    for (const char *p = text; *p; p++)
        if (!isdigit((unsigned char)*p)) return false;
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    if (errno != 0 || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static bool check_number(const char *name, const char *value, uint64_t lo, uint64_t hi, uint64_t *out)
{
    if (parse_u64(value, lo, hi, out)) return true;
    fprintf(stderr, "cgsim: %s=%s is invalid; accepted: an integer from %llu to %llu\n", name, value,
            (unsigned long long)lo, (unsigned long long)hi);
    return false;
}

/* YY.WW.BUILD or YY.WW.BUILD.HOTFIX, as NEO numbers its releases (26.27.39122.11): each part plain digits. */
static bool parse_neo_version(const char *text, struct cgsim_config *cfg)
{
    uint64_t part[4] = {0};
    int n = 0;
    const char *p = text;
    while (n < 4) {
        char buf[16];
        size_t len = strspn(p, "0123456789");
        if (len == 0 || len >= sizeof buf) return false;
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (!parse_u64(buf, 0, 0xffffffffu, &part[n])) return false;
        n++;
        p += len;
        if (*p == '\0') break;
        if (*p != '.') return false;
        p++;
    }
    if (*p != '\0' || n < 3) return false;
    cfg->neo_version = true;
    cfg->build = (uint32_t)part[2];
    cfg->hotfix = (uint32_t)part[3];
    return true;
}

/* 0x8086 or 32902. */
static bool parse_id(const char *text, uint32_t *out)
{
    uint64_t v = 0;
    if (strncmp(text, "0x", 2) == 0 && text[2] && strspn(text + 2, "0123456789abcdefABCDEF") == strlen(text + 2) &&
        strlen(text + 2) <= 8) {
        *out = (uint32_t)strtoul(text + 2, NULL, 16);
        return true;
    }
    if (!parse_u64(text, 0, 0xffffffffu, &v)) return false;
    *out = (uint32_t)v;
    return true;
}

static void parse_environment(void)
{
    struct cgsim_config cfg = {
        .devices = 1, .compile_ms = 20, .kernel_us = 100, .race = CGSIM_RACE_OFF, .vendor_id = CGSIM_VENDOR_ID};
    snprintf(cfg.device_name, sizeof cfg.device_name, "%s", CGSIM_DEVICE_NAME);
    bool ok = true;

    for (char **env = environ; env && *env; env++) {
        if (strncmp(*env, "CGSIM_", 6) != 0) continue;
        const char *eq = strchr(*env, '=');
        if (!eq) continue;
        char name[128];
        size_t len = (size_t)(eq - *env);
        if (len >= sizeof name) len = sizeof name - 1;
        memcpy(name, *env, len);
        name[len] = '\0';
        const char *value = eq + 1;
        uint64_t v = 0;

        if (strcmp(name, "CGSIM_DEVICES") == 0) {
            if (check_number(name, value, 1, CGSIM_MAX_DEVICES, &v))
                cfg.devices = (uint32_t)v;
            else
                ok = false;
        } else if (strcmp(name, "CGSIM_COMPILE_MS") == 0) {
            if (check_number(name, value, 0, 600000, &v))
                cfg.compile_ms = v;
            else
                ok = false;
        } else if (strcmp(name, "CGSIM_KERNEL_US") == 0) {
            if (check_number(name, value, 0, 60000000, &v))
                cfg.kernel_us = v;
            else
                ok = false;
        } else if (strcmp(name, "CGSIM_COMPILER_RACE") == 0) {
            if (strcmp(value, "off") == 0) {
                cfg.race = CGSIM_RACE_OFF;
            } else if (strcmp(value, "abort") == 0) {
                cfg.race = CGSIM_RACE_ABORT;
            } else {
                fprintf(stderr, "cgsim: %s=%s is invalid; accepted: off, abort\n", name, value);
                ok = false;
            }
        } else if (strcmp(name, "CGSIM_DRIVER_VERSION") == 0) {
            if (!parse_neo_version(value, &cfg)) {
                fprintf(stderr,
                        "cgsim: %s=%s is invalid; accepted: a NEO version YY.WW.BUILD or YY.WW.BUILD.HOTFIX "
                        "(26.27.39122.11)\n",
                        name, value);
                ok = false;
            }
        } else if (strcmp(name, "CGSIM_VENDOR_ID") == 0) {
            if (!parse_id(value, &cfg.vendor_id)) {
                fprintf(stderr, "cgsim: %s=%s is invalid; accepted: a PCI vendor id, 0x8086 or 32902\n", name, value);
                ok = false;
            }
        } else if (strcmp(name, "CGSIM_DEVICE_NAME") == 0) {
            if (*value == '\0' || strlen(value) >= ZE_MAX_DEVICE_NAME) {
                fprintf(stderr, "cgsim: %s=%s is invalid; accepted: 1 to %d characters\n", name, value,
                        ZE_MAX_DEVICE_NAME - 1);
                ok = false;
            } else {
                snprintf(cfg.device_name, sizeof cfg.device_name, "%s", value);
            }
        } else {
            fprintf(stderr, "cgsim: %s=%s is not a known variable; accepted: %s\n", name, value, ACCEPTED_NAMES);
            ok = false;
        }
    }
    parsed = cfg;
    parsed_ok = ok;
}

bool cgsim_config_load(struct cgsim_config *out)
{
    pthread_once(&once, parse_environment);
    *out = parsed;
    return parsed_ok;
}
