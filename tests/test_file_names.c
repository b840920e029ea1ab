/* The names of callguard's files (src/common/file_names.h): every name
 * made parses back to what made it, hosts with dashes, dots and "rank" in
 * them included, and names no one made are refused. */
#include "cgtest.h"

#include "../src/common/file_names.h"

#include <limits.h>
#include <stdint.h>

static const char *const odd_hosts[] = {
    "vm",
    "node-01.cluster.example",
    "rank5",
    "myrankhost",
    "node-rankless",
    "a-rank",
    "a-rank1",
    "a-rank1-rank2",
    "x-pid3",
    "h-pid3-4",
    "-",
    "a--b",
    "host with/odd:chars",
    "",
    "r-rank0",
    "0",
    /* 64 bytes, the longest a host name has */
    "n-rank-pid-1.2.3-n-rank-pid-1.2.3-n-rank-pid-1.2.3-n-rank-pid-12",
};

/* The name alone: what a directory listing gives. */
static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int job_round_trip(cgi_file_kind kind, const char *dir, const char *host, int rank, pid_t pid, unsigned k)
{
    char *path = cgi_job_file_name(dir, kind, host, rank, pid, k), want[CGI_HOST_PART_MAX];
    CHECK(path);
    cgi_host_part(want, host);
    cgi_file_name is;
    CHECKF(cgi_file_name_parse(base(path), kind, &is), "%s", path);
    CHECKF(strcmp(is.host, want) == 0 && is.rank == rank && is.pid == pid && is.k == (k > 1 ? k : 1),
           "%s: host %s rank %d pid %d k %u", path, is.host, is.rank, (int)is.pid, is.k);
    /* One kind's name is no other kind's. */
    for (int other = CGI_FILE_STATS; other <= CGI_FILE_NOTE; other++)
        CHECKF(other == (int)kind || !cgi_file_name_parse(base(path), (cgi_file_kind)other, &is), "%s as %d", path,
               other);
    free(path);
    return 0;
}

static int test_job_file_names_parse_back_to_host_rank_pid_and_k(int argc, char **argv)
{
    (void)argc, (void)argv;
    const int ranks[] = {-1, 0, 3, 999999999};
    const pid_t pids[] = {1, 4242, INT_MAX};
    const unsigned ks[] = {1, 2, 99999};
    for (size_t h = 0; h < sizeof odd_hosts / sizeof *odd_hosts; h++)
        for (size_t r = 0; r < sizeof ranks / sizeof *ranks; r++)
            for (size_t p = 0; p < sizeof pids / sizeof *pids; p++)
                for (size_t k = 0; k < sizeof ks / sizeof *ks; k++) {
                    if (job_round_trip(CGI_FILE_REPORT, "out/", odd_hosts[h], ranks[r], pids[p], ks[k]) ||
                        job_round_trip(CGI_FILE_TRACE, "/tmp/t", odd_hosts[h], ranks[r], pids[p], ks[k]))
                        return 1;
                    if (ranks[r] < 0 && ks[k] == 1 && job_round_trip(CGI_FILE_LIVE, "", odd_hosts[h], -1, pids[p], 1))
                        return 1;
                    if (r == 0 && p == 0 && k == 0 &&
                        (job_round_trip(CGI_FILE_LEASE, "d/", odd_hosts[h], -1, 0, 1) ||
                         job_round_trip(CGI_FILE_NOTE, "d", odd_hosts[h], -1, 0, 1)))
                        return 1;
                }
    /* The folder is joined with one '/'; the host is made a part of a name. */
    char *p = cgi_job_file_name("out", CGI_FILE_REPORT, "a b", 2, 7, 3);
    CHECKF(p && strcmp(p, "out/callguard-a_b-rank2-pid7-3.json") == 0, "%s", p);
    free(p);
    p = cgi_job_file_name("out/", CGI_FILE_LIVE, "vm-rank12", -1, 7, 1);
    CHECKF(p && strcmp(p, "out/.callguard-vm_rank12-pid7.live") == 0, "%s", p);
    free(p);
    p = cgi_job_file_name("out", CGI_FILE_NOTE, "vm-rank12", 3, 7, 2); /* a host's: no rank, pid or k */
    CHECKF(p && strcmp(p, "out/.callguard-vm_rank12-stuck.note") == 0, "%s", p);
    free(p);
    p = cgi_job_file_name("/", CGI_FILE_TRACE, NULL, -1, 7, 1);
    CHECKF(p && strcmp(p, "/trace-unknown-host-pid7.json") == 0, "%s", p);
    free(p);
    return 0;
}

static int test_process_file_names_parse_back_to_pid_and_stamp(int argc, char **argv)
{
    (void)argc, (void)argv;
    const pid_t pids[] = {1, 77, INT_MAX};
    const uint64_t stamps[] = {0, 1, 123456789012345678u, UINT64_MAX};
    char path[128];
    for (int kind = CGI_FILE_STATS; kind <= CGI_FILE_RINGS; kind++)
        for (size_t p = 0; p < sizeof pids / sizeof *pids; p++)
            for (size_t s = 0; s < sizeof stamps / sizeof *stamps; s++) {
                int n = cgi_proc_file_name(path, sizeof path, "/run/d", (cgi_file_kind)kind, pids[p], stamps[s]);
                CHECK(n > 0 && (size_t)n < sizeof path && strncmp(path, "/run/d/", 7) == 0);
                cgi_file_name is;
                CHECKF(cgi_file_name_parse(base(path), (cgi_file_kind)kind, &is), "%s", path);
                CHECKF(is.pid == pids[p] && is.stamp == stamps[s], "%s", path);
                CHECKF(!cgi_file_name_parse(base(path), (cgi_file_kind)(kind ^ 1), &is), "%s", path);
            }
    CHECK(cgi_proc_file_name(path, sizeof path, "d", CGI_FILE_STATS, 12, 345) == (int)strlen("d/cg-12-345.stats"));
    CHECKF(strcmp(path, "d/cg-12-345.stats") == 0, "%s", path);
    /* A name that does not fit is said to be cut. */
    CHECK(cgi_proc_file_name(path, 12, "d", CGI_FILE_STATS, 12, 345) >= 12);
    return 0;
}

static int test_malformed_file_names_are_refused(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const struct {
        cgi_file_kind kind;
        const char *name;
    } bad[] = {
        {CGI_FILE_STATS, "cg-.stats"},
        {CGI_FILE_STATS, "cg-12.stats"},
        {CGI_FILE_STATS, "cg-12-.stats"},
        {CGI_FILE_STATS, "cg--5.stats"},
        {CGI_FILE_STATS, "cg-0-5.stats"},
        {CGI_FILE_STATS, "cg-012-5.stats"},
        {CGI_FILE_STATS, "cg-1-2x.stats"},
        {CGI_FILE_STATS, "cg-1-2-3.stats"},
        {CGI_FILE_STATS, "cg-1-2.stats.tmp"},
        {CGI_FILE_STATS, "xcg-1-2.stats"},
        {CGI_FILE_STATS, "cg-2147483648-1.stats"},
        {CGI_FILE_STATS, "cg-1-18446744073709551616.stats"},
        {CGI_FILE_STATS, "lost"},
        {CGI_FILE_RINGS, "cg-1-2.stats"},
        {CGI_FILE_REPORT, "callguard-.json"},
        {CGI_FILE_REPORT, "callguard-vm.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid0.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid05.json"},
        {CGI_FILE_REPORT, "callguard-vm-pidx.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid5-.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid5-1.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid5-2-3.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid2147483648.json"},
        {CGI_FILE_REPORT, "callguard--pid5.json"},
        {CGI_FILE_REPORT, "callguard--rank1-pid5.json"},
        {CGI_FILE_REPORT, "callguard-vm-rank01-pid5.json"},
        {CGI_FILE_REPORT, "callguard-vm-rank2147483648-pid5.json"},
        {CGI_FILE_REPORT, "callguard-a b-pid5.json"},
        {CGI_FILE_REPORT, "callguard-vm-rank3-pid5.json.tmp"},
        {CGI_FILE_REPORT, "trace-vm-rank3-pid5.json"},
        {CGI_FILE_REPORT, "callguard-vm-pid5.json"
                          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
        {CGI_FILE_REPORT, "callguard-n-rank-pid-1.2.3-n-rank-pid-1.2.3-n-rank-pid-1.2.3-n-rank-pid-123-pid5.json"},
        {CGI_FILE_TRACE, "callguard-vm-pid5.json"},
        {CGI_FILE_LIVE, ".callguard-vm-rank1-pid5.live"},
        {CGI_FILE_LIVE, ".callguard-vm-pid5-2.live"},
        {CGI_FILE_LIVE, "callguard-vm-pid5.live"},
        {CGI_FILE_LIVE, ".callguard-vm-pid5.json"},
        {CGI_FILE_NOTE, ".callguard--stuck.note"},
        {CGI_FILE_NOTE, ".callguard-a b-stuck.note"},
        {CGI_FILE_NOTE, "callguard-vm-stuck.note"},
        {CGI_FILE_LEASE, ".callguard-vm-stuck.note"},
        {CGI_FILE_LEASE, ".callguard-vm-rank1-stuck.lease"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cgi_file_name is;
        CHECKF(!cgi_file_name_parse(bad[i].name, bad[i].kind, &is), "%s (kind %d) was taken: pid %d", bad[i].name,
               (int)bad[i].kind, (int)is.pid);
    }
    /* Hosts that look like a part are still hosts where nothing else can be meant. */
    cgi_file_name is;
    CHECK(cgi_file_name_parse("callguard-rank3-pid5.json", CGI_FILE_REPORT, &is) && strcmp(is.host, "rank3") == 0 &&
          is.rank == -1);
    CHECK(cgi_file_name_parse("callguard-node-rankless-rank3-pid5.json", CGI_FILE_REPORT, &is) &&
          strcmp(is.host, "node-rankless") == 0 && is.rank == 3);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"job_file_names_parse_back_to_host_rank_pid_and_k", test_job_file_names_parse_back_to_host_rank_pid_and_k},
    {"process_file_names_parse_back_to_pid_and_stamp", test_process_file_names_parse_back_to_pid_and_stamp},
    {"malformed_file_names_are_refused", test_malformed_file_names_are_refused},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
