/* A program that handles its own fatal signals, for the tests that the
 * fatal-signal hook (`callguard run --signals record`) changes nothing about
 * that handling. Each mode prints what its handlers saw; the tests compare
 * the output and the wait status with and without callguard. argv[1] says
 * what to do; alarm() bounds every mode, so a hang ends as SIGALRM. Each
 * makes one toy call first: a report lists only processes that made one. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <toy.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile sig_atomic_t caught;
static volatile int *nowhere; /* a page mapped without access */

/* A real fault, and no undefined behaviour for UBSan to stop first. */
static void fault(void) { *nowhere = 1; }

static void say(const char *s)
{
    if (write(1, s, strlen(s)) < 0) _exit(90);
}

/* The signals of interest blocked right now, as a string ("SEGV USR1 "). */
static void print_blocked(const char *when)
{
    static const struct {
        int sig;
        const char *name;
    } sigs[] = {{SIGSEGV, "SEGV"}, {SIGBUS, "BUS"}, {SIGUSR1, "USR1"}, {SIGUSR2, "USR2"}, {SIGABRT, "ABRT"}};
    sigset_t now;
    char line[128] = "";
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    strcat(line, when);
    strcat(line, " blocked:");
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        if (sigismember(&now, sigs[i].sig)) {
            strcat(line, " ");
            strcat(line, sigs[i].name);
        }
    strcat(line, "\n");
    say(line);
}

/* The smallest handler: the alternate stack tests' (what it uses, the hook adds to). */
static void jump_quietly(int sig)
{
    (void)sig;
    caught++;
    siglongjmp(back, 1);
}

/* The same after putting SIG_DFL back, as crash handlers do (signal() here). */
static void reset_and_jump(int sig)
{
    signal(sig, SIG_DFL);
    caught++;
    siglongjmp(back, 1);
}

static void jump_out(int sig)
{
    (void)sig;
    caught++;
    print_blocked("handler");
    siglongjmp(back, 1);
}

/* fault-3 FLAGS SAVEMASK: a SIGSEGV handler (sa_flags FLAGS, sa_mask
 * {SIGUSR1}) jumps out of three faults with sigsetjmp(back, SAVEMASK). With
 * SA_NODEFER and no saved mask SIGSEGV stays unblocked and all three are
 * caught; without SA_NODEFER the second fault kills the process. */
static int fault_3(int flags, int savemask)
{
    struct sigaction sa = {.sa_handler = jump_out, .sa_flags = flags};
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR1);
    sigaction(SIGSEGV, &sa, NULL);
    for (volatile int i = 0; i < 3; i++) {
        if (sigsetjmp(back, savemask) == 0) fault();
        print_blocked("after");
    }
    printf("caught %d\n", (int)caught);
    return 0;
}

/* resethand: SA_RESETHAND | SA_SIGINFO. The handler gets the fault's
 * address, reads SIG_DFL back, and returns: the fault repeats and kills. */
static void reset_info(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    struct sigaction now;
    sigaction(sig, NULL, &now);
    say(info && info->si_addr == (void *)nowhere ? "siginfo: the fault's address\n" : "siginfo: wrong\n");
    say(now.sa_handler == SIG_DFL ? "reads back SIG_DFL\n" : "reads back a handler\n");
    print_blocked("handler");
}

static int resethand(void)
{
    struct sigaction sa = {.sa_sigaction = reset_info, .sa_flags = SA_SIGINFO | SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sigaction(SIGSEGV, &sa, NULL);
    fault();
    return 3;
}

/* ignore: SIGBUS ignored, then sent: nothing happens. */
static int ignore(void)
{
    signal(SIGBUS, SIG_IGN);
    raise(SIGBUS);
    struct sigaction now;
    sigaction(SIGBUS, NULL, &now);
    printf("%s\n", now.sa_handler == SIG_IGN ? "still ignored" : "not ignored");
    return 0;
}

/* reenter: the main thread sets SIGBUS's action over and over while another
 * thread sends it SIGUSR1, whose handler reads SIGBUS's action (sigaction is
 * async-signal-safe). It must read one of the two handlers main sets. */
static void bus_a(int sig) { (void)sig; }
static void bus_b(int sig) { (void)sig; }
static volatile sig_atomic_t usr1_seen, wrong;
static volatile int sending = 1;

static void read_bus(int sig)
{
    (void)sig;
    struct sigaction now;
    sigaction(SIGBUS, NULL, &now);
    if (now.sa_handler != bus_a && now.sa_handler != bus_b) wrong = 1;
    usr1_seen++;
}

static void *sender(void *main_thread)
{
    while (sending) {
        pthread_kill(*(pthread_t *)main_thread, SIGUSR1);
        usleep(20);
    }
    return NULL;
}

static int reenter(void)
{
    struct sigaction sa = {.sa_handler = read_bus}, a = {.sa_handler = bus_a}, b = {.sa_handler = bus_b};
    sigemptyset(&sa.sa_mask);
    sigemptyset(&a.sa_mask);
    sigemptyset(&b.sa_mask);
    sigaction(SIGBUS, &a, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t self = pthread_self(), t;
    pthread_create(&t, NULL, sender, &self);
    for (int i = 0; i < 2000000 && usr1_seen < 2000; i++)
        sigaction(SIGBUS, i & 1 ? &a : &b, NULL);
    sending = 0;
    pthread_join(t, NULL);
    printf("%s\n", wrong ? "read a torn action" : "done");
    return 0;
}

/* The alternate signal stack: SIZE bytes (a multiple of 64, so the
 * kernel's frame sits at the same offset from its top in every run) right
 * above a page without access, where an overflow faults. */
#define PATTERN 0xA5
static unsigned char *alt;

static void set_alt_stack(size_t size, void (*handler)(int))
{
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = (size + page - 1) / page;
    unsigned char *m = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m, page, PROT_NONE) != 0 || size % 64) exit(91);
    alt = m + page;
    memset(alt, PATTERN, size);
    stack_t ss = {.ss_sp = alt, .ss_size = size};
    if (sigaltstack(&ss, NULL) != 0) {
        perror("sigaltstack");
        exit(92);
    }
    struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
}

/* Deep enough to overflow any stack; not a tail call, not folded away. */
static int recurse(int n)
{
    volatile char pad[256];
    pad[n & 255] = (char)n;
    if (n == -1) return 0; /* never: overflow comes first */
    return recurse(n + 1) + pad[(n + 1) & 255];
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    alarm(10);
    int32_t sum;
    toyAdd(1, 1, &sum);
    nowhere = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if ((void *)nowhere == MAP_FAILED) return 93;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "fault-3") && argc > 3) {
        int flags = !strcmp(argv[2], "nodefer") ? SA_NODEFER : 0;
        return fault_3(flags, atoi(argv[3]));
    }
    if (!strcmp(mode, "resethand")) return resethand();
    if (!strcmp(mode, "ignore")) return ignore();
    if (!strcmp(mode, "reenter")) return reenter();
    /* alt-used [reset]: how many bytes of a 64 KiB alternate stack a
     * fault's handler used (the deepest byte that lost the pattern); with
     * reset, a handler that puts SIG_DFL back first. */
    if (!strcmp(mode, "alt-used")) {
        size_t size = 65536;
        set_alt_stack(size, argc > 2 && !strcmp(argv[2], "reset") ? reset_and_jump : jump_quietly);
        if (sigsetjmp(back, 1) == 0) fault();
        size_t untouched = 0;
        while (untouched < size && alt[untouched] == PATTERN)
            untouched++;
        printf("%zu\n", size - untouched);
        return 0;
    }
    /* overflow SIZE: a stack overflow caught on an alternate stack of SIZE bytes. */
    if (!strcmp(mode, "overflow") && argc > 2) {
        set_alt_stack(strtoul(argv[2], NULL, 10), jump_quietly);
        if (sigsetjmp(back, 1) == 0) return recurse(0);
        printf("caught the overflow\n");
        return 0;
    }
    fprintf(stderr, "sigprog: unknown mode '%s'\n", mode);
    return 2;
}
