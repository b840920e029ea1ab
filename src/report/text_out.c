/* How the text report reaches the screen: its width, strings of a process
 * made safe to print, its lines fitted to the width, and the processes'
 * sections kept aside (the spool) until the summary that leads them is
 * known. */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* A string of a process (its command line, a thread's name, a Python
 * file, a quirks file's text) in the table, at most max bytes: a control
 * character, a C1 control or a byte that is no UTF-8 becomes '?', as the
 * reader of saved reports makes it, so a table never prints terminal
 * control (docs/security.md). */
void cgi_text_str(FILE *out, const char *s, size_t max)
{
    size_t left = strnlen(s, max);
    while (left) {
        size_t n = cgi_utf8_seq(s, left);
        unsigned char ch = (unsigned char)*s;
        int c1 = n == 2 && ch == 0xc2 && (unsigned char)s[1] < 0xa0;
        if (n > 1 && !c1)
            fwrite(s, 1, n, out);
        else
            fputc(n == 1 && ch >= 0x20 && ch != 0x7f ? ch : '?', out);
        if (!n || c1) n = 1;
        s += n, left -= n;
    }
}

/* "SIGABRT" (or "signal 77" for one without a name). Our own table, not
 * sigabbrev_np (glibc 2.32): the package is built for glibc 2.17. */
void cgi_text_signal(int sig, char *out, size_t cap)
{
    static const char *const names[] = {
        [SIGHUP] = "HUP",       [SIGINT] = "INT",     [SIGQUIT] = "QUIT", [SIGILL] = "ILL",   [SIGTRAP] = "TRAP",
        [SIGABRT] = "ABRT",     [SIGBUS] = "BUS",     [SIGFPE] = "FPE",   [SIGKILL] = "KILL", [SIGUSR1] = "USR1",
        [SIGSEGV] = "SEGV",     [SIGUSR2] = "USR2",   [SIGPIPE] = "PIPE", [SIGALRM] = "ALRM", [SIGTERM] = "TERM",
        [SIGCHLD] = "CHLD",     [SIGCONT] = "CONT",   [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP", [SIGTTIN] = "TTIN",
        [SIGTTOU] = "TTOU",     [SIGURG] = "URG",     [SIGXCPU] = "XCPU", [SIGXFSZ] = "XFSZ", [SIGVTALRM] = "VTALRM",
        [SIGPROF] = "PROF",     [SIGWINCH] = "WINCH", [SIGIO] = "IO",     [SIGPWR] = "PWR",   [SIGSYS] = "SYS",
#ifdef SIGSTKFLT
        [SIGSTKFLT] = "STKFLT",
#endif
    };
    if (sig > 0 && (size_t)sig < sizeof names / sizeof names[0] && names[sig])
        snprintf(out, cap, "SIG%s", names[sig]);
    else
        snprintf(out, cap, "signal %d", sig);
}

int cgi_text_width(FILE *out)
{
    /* COLUMNS as a shell sets it, when exported; else the terminal's, at
     * most the default; else the default (a file, a pipe). */
    const char *env = getenv("COLUMNS");
    char *end;
    long cols = env && *env ? strtol(env, &end, 10) : 0;
    if (env && *env && !*end && cols > 0)
        return cols < CGI_TEXT_MIN_WIDTH ? CGI_TEXT_MIN_WIDTH : (int)(cols > 4096 ? 4096 : cols);
    struct winsize ws;
    if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_col < CGI_TEXT_WIDTH)
        return ws.ws_col < CGI_TEXT_MIN_WIDTH ? CGI_TEXT_MIN_WIDTH : ws.ws_col;
    return CGI_TEXT_WIDTH;
}

/* Columns of the n bytes at s: a byte that continues a UTF-8 sequence adds none. */
static size_t cgi_cols(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

/* The bytes of s (n long) that fill at most cols columns, ending before a
 * UTF-8 sequence's continuation. */
static size_t cgi_bytes_for(const char *s, size_t n, size_t cols)
{
    size_t i = 0, c = 0;
    while (i < n) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && c++ == cols) break;
        i++;
    }
    return i;
}

/* One line (without its newline) at most width columns: a longer one goes
 * on at its last space that fits, on lines indented further than its own;
 * a word longer than the room is cut after its last '/' that fits (a path
 * between two names), else where the room ends. */
static void cgi_fit_line(FILE *out, const char *s, size_t n, int width)
{
    size_t indent = strspn(s, " ");
    if (indent > n) indent = n;
    size_t more = indent + 4 > (size_t)width / 2 ? 4 : indent + 4, lead = 0;
    while (width > 0 && lead + cgi_cols(s, n) > (size_t)width) {
        size_t room = cgi_bytes_for(s, n, (size_t)width - lead), cut = room;
        while (cut > 0 && s[cut] != ' ')
            cut--;
        if (cut <= (lead ? 0 : indent)) { /* no space to go on at: after a path's '/', else where the room ends */
            cut = room;
            while (cut > 0 && s[cut - 1] != '/')
                cut--;
            if (cut <= (lead ? 0 : indent) + 1) cut = room;
        }
        size_t keep = cut;
        while (keep > 0 && s[keep - 1] == ' ')
            keep--;
        fprintf(out, "%*s%.*s\n", (int)lead, "", (int)keep, s);
        s += cut, n -= cut;
        while (n && *s == ' ')
            s++, n--;
        lead = more;
        if (!n) return;
    }
    fprintf(out, "%*s%.*s\n", (int)lead, "", (int)n, s);
}

void cgi_text_fit(FILE *out, const char *text, size_t len, int width)
{
    while (len) {
        const char *nl = memchr(text, '\n', len);
        size_t n = nl ? (size_t)(nl - text) : len;
        cgi_fit_line(out, text, n, width);
        text += n + (nl != NULL), len -= n + (nl != NULL);
    }
}

/* ---- the spool: the processes' sections, in memory and then in a file ----------- */

/* The spooled text's lines fitted, each marked line shown or not as its
 * fold is made (CGI_FOLD_MARK). */
static void cgi_spool_fit(const cgi_spool *s, FILE *out, const char *text, size_t len, int width)
{
    while (len) {
        const char *nl = memchr(text, '\n', len);
        size_t n = nl ? (size_t)(nl - text) : len, skip = 0;
        int shown = 1;
        if (n >= 3 && text[0] == CGI_FOLD_MARK) {
            unsigned kind = text[1] == 'u' ? CGI_FOLD_UNRANKED : text[1] == 'r' ? CGI_FOLD_RANKED : 0;
            shown = (text[2] == '+') == ((s->folds & kind) != 0), skip = 3;
        }
        if (shown) cgi_fit_line(out, text + skip, n - skip, width);
        text += n + (nl != NULL), len -= n + (nl != NULL);
    }
}

int cgi_spool_open(cgi_spool *s)
{
    *s = (cgi_spool){0};
    s->f = open_memstream(&s->buf, &s->len);
    return s->f ? 0 : ENOMEM;
}

/* An unlinked file in TMPDIR (or /tmp), for sections past the memory kept. */
static FILE *cgi_spool_file(void)
{
    const char *dir = secure_getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        char *path = NULL;
        if (asprintf(&path, "%s/callguard-report-XXXXXX", dir) < 0) return NULL;
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0) unlink(path);
        free(path);
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f && fd >= 0) close(fd);
    return f;
}

int cgi_spool_bound(cgi_spool *s)
{
    if (s->on_disk || fflush(s->f) != 0) return s->on_disk ? 0 : ENOMEM;
    if (s->len < CGI_SPOOL_MEMORY) return 0;
    FILE *f = cgi_spool_file();
    if (!f) return errno ? errno : EIO;
    int ok = fwrite(s->buf, 1, s->len, f) == s->len;
    fclose(s->f);
    free(s->buf);
    s->buf = NULL, s->len = 0, s->f = f, s->on_disk = 1;
    return ok ? 0 : EIO;
}

int cgi_spool_drain(cgi_spool *s, FILE *out, int width)
{
    int e = 0;
    if (!s->on_disk) {
        e = fclose(s->f) != 0 ? ENOMEM : 0;
        if (!e) cgi_spool_fit(s, out, s->buf, s->len, width);
    } else if (fflush(s->f) != 0 || ferror(s->f) || fseek(s->f, 0, SEEK_SET) != 0) {
        e = EIO;
        fclose(s->f);
    } else {
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, s->f)) > 0)
            cgi_spool_fit(s, out, line, (size_t)n, width);
        if (ferror(s->f)) e = EIO;
        free(line);
        fclose(s->f);
    }
    free(s->buf);
    *s = (cgi_spool){0};
    return e;
}

void cgi_spool_drop(cgi_spool *s)
{
    if (s->f) fclose(s->f);
    free(s->buf);
    *s = (cgi_spool){0};
}
