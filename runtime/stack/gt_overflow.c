/* gt_overflow.c: the SIGSEGV handler that reports a green thread's stack overflow, and
 * the carriers' signal stacks it runs on. */
#include "gt_overflow.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "sigline.h"

#define LD_OVERFLOW_ALTSTACK_MIN (64u * 1024u)

/* Signal dispositions are process-wide, so the one we displaced is recorded once for
 * the process, and so is the question the handler asks: the handler chains to that
 * one for every fault that is not an overflow. */
static pthread_once_t overflow_once = PTHREAD_ONCE_INIT;
static struct sigaction overflow_prev;
static _Atomic(ld_overflow_running_fn) overflow_running;

/* The stack pointer of the context a signal interrupted, or NULL where unknown. */
static const void *overflow_fault_sp(const void *uctx)
{
    const ucontext_t *uc = uctx;

#if defined(__x86_64__)
    return (const void *)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (const void *)uc->uc_mcontext.sp;
#else
    (void)uc;
    return NULL;
#endif
}

/* One line, one write: safe in the handler, and never interleaved with another's. */
static void overflow_report(uint64_t id, size_t size)
{
    ld_sigline l;

    ld_sigline_init(&l);
    ld_sigline_str(&l, "loomdist: green thread ");
    ld_sigline_u64(&l, id);
    ld_sigline_str(&l, " overflowed its ");
    ld_sigline_u64(&l, size / 1024u);
    ld_sigline_str(&l, " KiB stack\n");
    ld_sigline_write(&l, STDERR_FILENO);
}

/* Die of this signal as if no handler were installed: a fault re-raises itself when
 * the handler returns; a signal that was sent is raised again, pending until then. */
static void overflow_die_default(int sig, const siginfo_t *si)
{
    struct sigaction dfl;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si == NULL || si->si_code <= 0)
        raise(sig);
}

/* A canary found broken at a switch: the thread is not running past it any more, so
 * the report comes first and the process then dies as a guard-page hit would. */
_Noreturn void ld_overflow_die(uint64_t id, const ld_stack *st)
{
    overflow_report(id, st->size);
    overflow_die_default(SIGSEGV, NULL);
    abort();
}

/* Hand a fault that is not ours to the handler that was there before. */
static void overflow_chain(int sig, siginfo_t *si, void *uctx)
{
    const struct sigaction *p = &overflow_prev;

    if (p->sa_flags & SA_SIGINFO)
        p->sa_sigaction(sig, si, uctx);
    else if (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN)
        overflow_die_default(sig, si);
    else
        p->sa_handler(sig);
}

/* SIGSEGV: an overflow of the running green thread is reported, and the process then
 * dies of the fault; any other fault goes to the previous handler. */
static void overflow_on_segv(int sig, siginfo_t *si, void *uctx)
{
    int saved = errno;
    uint64_t id = 0;
    ld_overflow_running_fn running = atomic_load(&overflow_running);
    const ld_stack *st = running != NULL ? running(&id) : NULL;

    if (st != NULL && ld_stack_overflowed(st, si->si_addr, overflow_fault_sp(uctx))) {
        overflow_report(id, st->size);
        overflow_die_default(sig, si);
    } else {
        overflow_chain(sig, si, uctx);
    }
    errno = saved;
}

/* Installed once per process, on the signal stack of whichever thread faults. The page
 * size is learnt first: the handler's overflow test needs it and cannot learn it. */
static void overflow_install(void)
{
    struct sigaction sa;

    (void)ld_stack_page();
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = overflow_on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &overflow_prev);
}

/* The signal stack: room for the kernel's signal frame and a chained handler. */
static size_t overflow_altstack_size(void)
{
    long min = sysconf(_SC_SIGSTKSZ);
    size_t size = LD_OVERFLOW_ALTSTACK_MIN, page = ld_stack_page();

    if (min > 0 && (size_t)min * 4 > size)
        size = (size_t)min * 4;
    return (size + page - 1) / page * page;
}

/* A thread that already has a signal stack keeps it: whoever set it up (ASan, say)
 * may unmap it at thread exit, and a handler we chain to expects to run there. */
int ld_overflow_watch_start(ld_overflow_watch *w, ld_overflow_running_fn running)
{
    stack_t cur, ours;
    void *mem;

    atomic_store(&overflow_running, running);
    pthread_once(&overflow_once, overflow_install);
    w->altstack = NULL;
    w->altsize = 0;
    if (sigaltstack(NULL, &cur) != 0)
        return -errno;
    if (!(cur.ss_flags & SS_DISABLE))
        return 0;
    w->altsize = overflow_altstack_size();
    mem = mmap(NULL, w->altsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
               0);
    if (mem == MAP_FAILED)
        return -errno;
    ours.ss_sp = mem;
    ours.ss_size = w->altsize;
    ours.ss_flags = 0;
    if (sigaltstack(&ours, &w->prev) != 0) {
        int rc = -errno;
        munmap(mem, w->altsize);
        return rc;
    }
    w->altstack = mem;
    return 0;
}

void ld_overflow_watch_stop(ld_overflow_watch *w)
{
    if (w->altstack == NULL)
        return;
    w->prev.ss_flags &= SS_DISABLE;
    sigaltstack(&w->prev, NULL);
    munmap(w->altstack, w->altsize);
    w->altstack = NULL;
}
