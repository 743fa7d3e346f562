/* gt_stack.h: green-thread stacks (internal to src/).
 *
 * A stack is an mmap'd region with one guard page below its usable bytes. The guard is
 * a MADV_GUARD_INSTALL guard region where the kernel has them (Linux 6.13 and later):
 * it costs no VMA, so neighbouring stacks merge into one mapping and vm.max_map_count
 * does not bound the number of stacks. Older kernels get a PROT_NONE page instead, two
 * VMAs per stack.
 *
 * Each scheduler keeps finished stacks in its own cache and hands them out again before
 * mapping new ones. A reused stack keeps the pages its last thread touched.
 *
 * The watch turns a hit on a guard page into the report "loomdist: green thread N
 * overflowed its S KiB stack" on stderr; the process then dies of SIGSEGV as before.
 */
#ifndef LD_GT_STACK_H
#define LD_GT_STACK_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__has_include)
/* cppcheck cannot evaluate __has_include. */
// cppcheck-suppress preprocessorErrorDirective
#if __has_include(<valgrind/valgrind.h>)
#define LD_STACK_VALGRIND 1
#endif
#endif

typedef struct ld_stack {
    void *lo;     /* lowest usable byte; the guard page lies just below */
    size_t size;  /* usable bytes, a multiple of the page size */
    size_t guard; /* guard bytes below lo */
#ifdef LD_STACK_VALGRIND
    unsigned vg_id; /* valgrind's name for the registered stack */
#endif
} ld_stack;

typedef struct ld_stack_free ld_stack_free;

typedef struct ld_stack_cache {
    size_t size;        /* usable bytes of every stack handed out */
    size_t page;        /* guard bytes, one page */
    size_t cap;         /* most stacks kept for reuse */
    size_t count;       /* stacks kept now */
    ld_stack_free *top; /* kept stacks, linked through their topmost bytes */
    int guard_advice;   /* 1 while MADV_GUARD_INSTALL has not been refused */
} ld_stack_cache;

/* A cache handing out stacks of `size` usable bytes (rounded up to whole pages, at
 * least one), keeping up to `cap` of them once returned. */
void ld_stack_cache_init(ld_stack_cache *c, size_t size, size_t cap);

/* Unmap every kept stack. Stacks handed out and not returned stay mapped. */
void ld_stack_cache_fini(ld_stack_cache *c);

/* A stack from the cache, or a freshly mapped one. -ENOMEM when the kernel refuses. */
int ld_stack_get(ld_stack_cache *c, ld_stack *out);

/* Give a stack back: kept for reuse while the cache has room, unmapped otherwise. */
void ld_stack_put(ld_stack_cache *c, const ld_stack *st);

/* Whether a fault at addr lies in the guard page of st. Async-signal-safe. */
int ld_stack_in_guard(const ld_stack *st, const void *addr);

/* Per carrier thread: the signal stack the SIGSEGV handler runs on, since a thread
 * that overflowed has no stack left to run it on. */
typedef struct ld_stack_watch {
    void *altstack; /* ours, or NULL when the thread already had one */
    size_t altsize;
    stack_t prev;
} ld_stack_watch;

/* On the carrier thread: make sure it has a signal stack, and install the process-wide
 * SIGSEGV handler (once; it chains to whichever handler it displaced). */
int ld_stack_watch_start(ld_stack_watch *w);

/* On the same thread: put back the signal stack it had before, and unmap ours. */
void ld_stack_watch_stop(ld_stack_watch *w);

/* Provided by the scheduler (gt_sched.c): the stack of the green thread running on the
 * calling thread, and its id in *id; NULL outside a green thread. Only reads, so the
 * SIGSEGV handler may call it. */
const ld_stack *ld_sched_running_stack(uint64_t *id);

#endif
