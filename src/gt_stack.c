/* gt_stack.c: mmap'd green-thread stacks with a guard page, their per-scheduler
 * cache, and the SIGSEGV handler that reports a green thread's stack overflow. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gt_stack.h"
#include "gt_switch.h"

#ifdef LD_STACK_VALGRIND
#include <valgrind/valgrind.h>
#endif
#ifdef LD_CTX_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Linux 6.13's guard regions; older headers lack the name, older kernels say EINVAL. */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

#define LD_STACK_ALTSTACK_MIN (64u * 1024u)

/* A kept stack's link, in its topmost bytes, which its last thread already touched. */
struct ld_stack_free {
    ld_stack_free *next;
#ifdef LD_STACK_VALGRIND
    unsigned vg_id;
#endif
};

/* The page size, for rounding stacks and sizing guards. */
static size_t stack_page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096u;
}

/* Usable sizes are whole pages so the guard page sits right below the stack. */
void ld_stack_cache_init(ld_stack_cache *c, size_t size, size_t cap)
{
    size_t page = stack_page_size();

    if (size < page)
        size = page;
    c->size = (size + page - 1) / page * page;
    c->page = page;
    c->cap = cap;
    c->count = 0;
    c->top = NULL;
    c->guard_advice = 1;
}

/* A guard region where the kernel has them, else a PROT_NONE page. The first refusal
 * is remembered, so old kernels pay for one failed madvise per cache, not per stack. */
static int stack_guard(ld_stack_cache *c, void *base)
{
    if (c->guard_advice) {
        if (madvise(base, c->page, MADV_GUARD_INSTALL) == 0)
            return 0;
        c->guard_advice = 0;
    }
    return mprotect(base, c->page, PROT_NONE) == 0 ? 0 : -errno;
}

/* Map guard and stack in one go; MAP_NORESERVE since most of a stack is never used. */
static int stack_map(ld_stack_cache *c, ld_stack *out)
{
    size_t len = c->page + c->size;
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    int rc;

    if (base == MAP_FAILED)
        return -errno;
    rc = stack_guard(c, base);
    if (rc != 0) {
        munmap(base, len);
        return rc;
    }
    out->lo = base + c->page;
    out->size = c->size;
    out->guard = c->page;
#ifdef LD_STACK_VALGRIND
    out->vg_id = VALGRIND_STACK_REGISTER(out->lo, (char *)out->lo + out->size);
#endif
    return 0;
}

/* Unmap guard and stack together, telling valgrind the stack is gone. */
static void stack_unmap(const ld_stack *st)
{
#ifdef LD_STACK_VALGRIND
    VALGRIND_STACK_DEREGISTER(st->vg_id);
#endif
    munmap((char *)st->lo - st->guard, st->guard + st->size);
}

/* The most recently kept stack first: its top pages are the likeliest still cached. */
int ld_stack_get(ld_stack_cache *c, ld_stack *out)
{
    ld_stack_free *f = c->top;

    if (f == NULL)
        return stack_map(c, out);
    c->top = f->next;
    c->count--;
    out->lo = (char *)(f + 1) - c->size;
    out->size = c->size;
    out->guard = c->page;
#ifdef LD_STACK_VALGRIND
    out->vg_id = f->vg_id;
#endif
    return 0;
}

/* A thread's last frames never return, so ASan still has their redzones poisoned:
 * clear them before the stack is reused or its addresses are mapped again. */
void ld_stack_put(ld_stack_cache *c, const ld_stack *st)
{
    ld_stack_free *f;

#ifdef LD_CTX_ASAN
    ASAN_UNPOISON_MEMORY_REGION(st->lo, st->size);
#endif
    if (c->count >= c->cap) {
        stack_unmap(st);
        return;
    }
    f = (ld_stack_free *)((char *)st->lo + st->size) - 1;
    f->next = c->top;
#ifdef LD_STACK_VALGRIND
    f->vg_id = st->vg_id;
#endif
    c->top = f;
    c->count++;
}

/* Every kept stack goes back to the kernel. */
void ld_stack_cache_fini(ld_stack_cache *c)
{
    ld_stack st;

    while (c->top != NULL) {
        ld_stack_get(c, &st);
        stack_unmap(&st);
    }
}

int ld_stack_in_guard(const ld_stack *st, const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    uintptr_t lo = (uintptr_t)st->lo;

    return a < lo && a >= lo - st->guard;
}

/* Signal dispositions are process-wide, so the one we displaced is recorded once for
 * the process: the handler chains to it for every fault that is not an overflow. */
static pthread_once_t stack_segv_once = PTHREAD_ONCE_INIT;
static struct sigaction stack_segv_prev;

/* Decimal digits of v into out, without stdio (async-signal-safe). */
static size_t stack_fmt_u64(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* Copy a string without the libc string functions (async-signal-safe). */
static size_t stack_fmt_str(char *out, const char *s)
{
    size_t n = 0;

    while (s[n] != '\0') {
        out[n] = s[n];
        n++;
    }
    return n;
}

/* One write(2) of the whole line, so lines from two threads do not interleave. */
static void stack_report(uint64_t id, size_t size)
{
    char line[128];
    size_t n = 0, off = 0;

    n += stack_fmt_str(line + n, "loomdist: green thread ");
    n += stack_fmt_u64(line + n, id);
    n += stack_fmt_str(line + n, " overflowed its ");
    n += stack_fmt_u64(line + n, size / 1024u);
    n += stack_fmt_str(line + n, " KiB stack\n");
    while (off < n) {
        ssize_t w = write(STDERR_FILENO, line + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

/* Die of this signal as if no handler were installed: a fault re-raises itself when
 * the handler returns; a signal that was sent is raised again, pending until then. */
static void stack_die_default(int sig, const siginfo_t *si)
{
    struct sigaction dfl;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0)
        raise(sig);
}

/* Hand a fault that is not ours to the handler that was there before. */
static void stack_chain(int sig, siginfo_t *si, void *uctx)
{
    const struct sigaction *p = &stack_segv_prev;

    if (p->sa_flags & SA_SIGINFO)
        p->sa_sigaction(sig, si, uctx);
    else if (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN)
        stack_die_default(sig, si);
    else
        p->sa_handler(sig);
}

/* SIGSEGV: an overflow into the running green thread's guard page is reported, and the
 * process then dies of the fault; any other fault goes to the previous handler. */
static void stack_on_segv(int sig, siginfo_t *si, void *uctx)
{
    int saved = errno;
    uint64_t id = 0;
    const ld_stack *st = ld_sched_running_stack(&id);

    if (st != NULL && ld_stack_in_guard(st, si->si_addr)) {
        stack_report(id, st->size);
        stack_die_default(sig, si);
    } else {
        stack_chain(sig, si, uctx);
    }
    errno = saved;
}

/* Installed once per process, on the signal stack of whichever thread faults. */
static void stack_install_handler(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = stack_on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &stack_segv_prev);
}

/* The signal stack: room for the kernel's signal frame and a chained handler. */
static size_t stack_altstack_size(void)
{
    long min = sysconf(_SC_SIGSTKSZ);
    size_t page = stack_page_size();
    size_t size = LD_STACK_ALTSTACK_MIN;

    if (min > 0 && (size_t)min * 4 > size)
        size = (size_t)min * 4;
    return (size + page - 1) / page * page;
}

/* A thread that already has a signal stack keeps it: whoever set it up (ASan, say)
 * may unmap it at thread exit, and a handler we chain to expects to run there. */
int ld_stack_watch_start(ld_stack_watch *w)
{
    stack_t cur, ours;
    void *mem;

    pthread_once(&stack_segv_once, stack_install_handler);
    w->altstack = NULL;
    w->altsize = 0;
    if (sigaltstack(NULL, &cur) != 0)
        return -errno;
    if (!(cur.ss_flags & SS_DISABLE))
        return 0;
    w->altsize = stack_altstack_size();
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

void ld_stack_watch_stop(ld_stack_watch *w)
{
    if (w->altstack == NULL)
        return;
    w->prev.ss_flags &= SS_DISABLE;
    sigaltstack(&w->prev, NULL);
    munmap(w->altstack, w->altsize);
    w->altstack = NULL;
}
