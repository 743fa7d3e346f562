/* test_gt_overflow.c: a green thread that runs into its guard page is named on stderr
 * and the process dies of SIGSEGV; every other fault behaves as if the runtime were
 * not there.
 *
 * Overflows are caught in every guard mode (LOOMDIST_STACK_GUARD=advice, page or
 * canary), and in copy mode on the carrier's shared stack. Each case runs in a forked
 * child whose stderr comes back through a pipe. The parent never creates a scheduler
 * itself, so every child installs the runtime's SIGSEGV handler afresh, after any handler
 * of its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt.h"

#include "check.h"
#include "mode.h"

/* What a child left behind. */
typedef struct child_result {
    int status;          /* from waitpid */
    uint64_t id;         /* the green thread the child spawned, 0 if none */
    char err[64 * 1024]; /* its stderr */
} child_result;

static child_result res;

/* --- what the children do --------------------------------------------------------- */

/* Each frame's buffer escapes into the next call, so no frame can be optimised away
 * or turned into a loop; the depth limit is never reached. */
static __attribute__((noinline)) int recurse(volatile char *prev, unsigned depth)
{
    volatile char frame[512];

    frame[0] = (char)depth;
    frame[sizeof frame - 1] = prev != NULL ? prev[0] : 0;
    if (depth == UINT_MAX)
        return frame[1];
    return recurse(frame, depth + 1) + frame[sizeof frame - 1];
}

static void overflow_thread(void *arg)
{
    (void)arg;
    recurse(NULL, 0);
}

/* An address nobody may touch: a fault in no guard page (and no null dereference,
 * which UBSan would report before the fault). It lies mid-way in 1 MiB of PROT_NONE,
 * far from any stack, so ASan calls it a SEGV rather than a stack overflow. */
static volatile int *forbidden_page(void)
{
    size_t len = 1u << 20;
    char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : (volatile int *)(p + len / 2);
}

static void wild_write_thread(void *arg)
{
    volatile int *p = arg;
    *p = 1;
}

/* Create a scheduler, spawn fn, report the thread's id on idfd, run. */
static void child_run_thread(int idfd, size_t stack_size, ld_gt_fn fn, void *arg)
{
    ld_sched_config cfg = test_config(stack_size);
    ld_sched *s = NULL;
    ld_gt *g = NULL;
    uint64_t id;

    if (ld_sched_create(&s, &cfg) != 0 || ld_gt_spawn(s, fn, arg, &g) != 0)
        _exit(3);
    id = ld_gt_id(g);
    if (write(idfd, &id, sizeof id) != (ssize_t)sizeof id)
        _exit(4);
    ld_sched_run(s);
}

static void child_overflow_16k(int idfd)
{
    child_run_thread(idfd, 16 * 1024, overflow_thread, NULL);
}

/* 40,000 bytes round up to ten pages: the report says 40 KiB. */
static void child_overflow_40k(int idfd)
{
    child_run_thread(idfd, 40000, overflow_thread, NULL);
}

static void child_wild_write_in_thread(int idfd)
{
    child_run_thread(idfd, 16 * 1024, wild_write_thread, (void *)forbidden_page());
}

/* A handler installed before the runtime's must still get the faults that are not
 * overflows. It only uses async-signal-safe calls. */
static void previous_handler(int sig, siginfo_t *si, void *uctx)
{
    static const char msg[] = "previous handler ran\n";

    (void)sig;
    (void)si;
    (void)uctx;
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0)
        _exit(43);
    _exit(42);
}

/* The fault is on the carrier, outside any green thread. */
static void child_chained_fault_on_carrier(int idfd)
{
    struct sigaction sa;
    ld_sched *s = NULL;
    volatile int *p = forbidden_page();

    (void)idfd;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = previous_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    if (ld_sched_create(&s, NULL) != 0)
        _exit(3);
    *p = 1;
}

/* --- the parent side -------------------------------------------------------------- */

/* Read fd to EOF into buf, NUL-terminated. */
static void read_all(int fd, char *buf, size_t cap)
{
    size_t n = 0;

    while (n < cap - 1) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
}

/* Fork, run body in the child with stderr on a pipe and no core dump, collect. */
static int run_child(void (*body)(int idfd))
{
    int errp[2], idp[2];
    pid_t pid;
    ssize_t r;

    memset(&res, 0, sizeof res);
    if (pipe(errp) != 0 || pipe(idp) != 0)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        struct rlimit nocore = {0, 0};
        setrlimit(RLIMIT_CORE, &nocore);
        alarm(20);
        dup2(errp[1], STDERR_FILENO);
        close(errp[0]);
        close(errp[1]);
        close(idp[0]);
        body(idp[1]);
        _exit(0);
    }
    close(errp[1]);
    close(idp[1]);
    read_all(errp[0], res.err, sizeof res.err);
    r = read(idp[0], &res.id, sizeof res.id);
    if (r != (ssize_t)sizeof res.id)
        res.id = 0;
    close(errp[0]);
    close(idp[0]);
    return waitpid(pid, &res.status, 0) == pid ? 0 : -1;
}

static int died_of_segv(void)
{
    return WIFSIGNALED(res.status) && WTERMSIG(res.status) == SIGSEGV;
}

static void expect_overflow(const char *name, void (*body)(int), unsigned kib)
{
    char want[128];
    const char *hit;

    CHECK(run_child(body) == 0, "%s: fork/pipe failed", name);
    CHECK(res.id != 0, "%s: the child spawned nothing (status %#x)", name, res.status);
    CHECK(died_of_segv(), "%s: status %#x, not death by SIGSEGV", name, res.status);
    snprintf(want, sizeof want,
             "loomdist: green thread %" PRIu64 " overflowed its %u KiB stack\n", res.id,
             kib);
    hit = strstr(res.err, want);
    CHECK(hit != NULL, "%s: stderr lacks \"%.*s\"; it was:\n%s", name,
          (int)strlen(want) - 1, want, res.err);
    CHECK(hit == NULL || strstr(hit + strlen(want), "overflowed") == NULL,
          "%s: reported twice", name);
}

/* Not an overflow: no report, and the child does not survive it. Under ASan or TSan
 * the sanitizer's handler was there first, so its report and exit code stand in for
 * the SIGSEGV. */
static void test_wild_write_in_thread(void)
{
    CHECK(run_child(child_wild_write_in_thread) == 0, "fork/pipe failed");
    CHECK(res.id != 0, "the child spawned nothing (status %#x)", res.status);
    CHECK(strstr(res.err, "overflowed") == NULL, "a wild write was reported as:\n%s",
          res.err);
    CHECK(died_of_segv() || (WIFEXITED(res.status) && WEXITSTATUS(res.status) != 0 &&
                             strstr(res.err, "Sanitizer: SEGV") != NULL),
          "status %#x; stderr:\n%s", res.status, res.err);
}

static void test_chained_fault(void)
{
    CHECK(run_child(child_chained_fault_on_carrier) == 0, "fork/pipe failed");
    CHECK(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 42,
          "status %#x: the previous handler did not run; stderr:\n%s", res.status,
          res.err);
    CHECK(strstr(res.err, "previous handler ran") != NULL, "stderr:\n%s", res.err);
    CHECK(strstr(res.err, "overflowed") == NULL, "reported as an overflow:\n%s", res.err);
}

int main(int argc, char **argv)
{
    /* Each guard the runtime has: the kernel's guard region where it exists, a
     * PROT_NONE page, and the canary checked at switches, forced by the environment.
     * Copy mode has one: the shared stack's PROT_NONE page. */
    static const char *const modes[] = {"advice", "page", "canary"};

    test_mode_from_args(argc, argv);
    alarm(120); /* a hung child fails the test instead of waiting for CTest's timeout */
    for (size_t m = 0; m < (test_mode == LD_STACK_COPY ? 1 : 3); m++) {
        setenv("LOOMDIST_STACK_GUARD", modes[m], 1);
        expect_overflow(modes[m], child_overflow_16k, 16);
        expect_overflow(modes[m], child_overflow_40k, 40);
        test_wild_write_in_thread();
    }
    unsetenv("LOOMDIST_STACK_GUARD");
    test_chained_fault();
    if (failures != 0) {
        fprintf(stderr, "test_gt_overflow: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_overflow: ok\n");
    return 0;
}
