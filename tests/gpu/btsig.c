/* tests/gpu/gil_probe.py's helper: a SIGUSR2 handler that prints the C stack of the thread it interrupts
 * (glibc's backtrace, with the objects' load addresses so that addr2line can name callguard's hidden
 * functions), and a way to send it to one thread. Diagnostics only; never loaded by callguard. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int btsig_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    if (info->dlpi_name && strstr(info->dlpi_name, "callguard"))
        fprintf(stderr, "btsig: base %#lx %s\n", (unsigned long)info->dlpi_addr, info->dlpi_name);
    return 0;
}

static void btsig_handler(int sig)
{
    (void)sig;
    void *pc[64];
    int n = backtrace(pc, 64);
    fprintf(stderr, "btsig: the waiting thread's stack, %d frames\n", n);
    backtrace_symbols_fd(pc, n, 2);
    dl_iterate_phdr(btsig_phdr, NULL);
}

__attribute__((visibility("default"))) void btsig_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = btsig_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &sa, NULL);
}

__attribute__((visibility("default"))) void btsig_signal(unsigned long thread)
{
    pthread_kill((pthread_t)thread, SIGUSR2);
}
