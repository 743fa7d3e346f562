/* gt.h: green threads, each with its own stack and a context switch of its own.
 *
 * One scheduler (ld_sched) lives on each carrier OS thread and drives that thread's
 * uv_loop. A green thread runs until it blocks in one of the calls below; the call
 * parks it on a libuv request whose callback makes it runnable again. Green threads
 * never migrate between carriers.
 *
 * Stacks are mmap'd with a guard page below them and kept in a per-scheduler cache for
 * reuse. A green thread that runs into its guard page is reported on stderr as
 * "green thread N overflowed its S KiB stack" before the process dies of SIGSEGV.
 *
 * Functions return 0 or a negative errno. Calls marked "in a green thread" must be made
 * from a green thread; elsewhere they return -EPERM or do nothing, as stated.
 */
#ifndef LD_GT_H
#define LD_GT_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

typedef struct ld_sched ld_sched; /* one per carrier thread */
typedef struct ld_gt ld_gt;       /* one green thread */
typedef void (*ld_gt_fn)(void *arg);

#define LD_GT_STACK_DEFAULT (64u * 1024u)

typedef struct ld_sched_config {
    size_t stack_size;  /* usable bytes per stack, rounded up to pages; 0: default */
    size_t stack_cache; /* stacks kept for reuse after a thread ends; 0: 1024 */
} ld_sched_config;

/* Create the scheduler of the calling thread, with a uv_loop of its own. cfg may be
 * NULL. One scheduler per thread at a time: a second call returns -EBUSY. The first
 * call in the process installs the SIGSEGV handler that reports overflows; it chains
 * to the handler it displaced, so create schedulers after MPI_Init or anything else
 * that installs a SIGSEGV handler of its own. */
int ld_sched_create(ld_sched **out, const ld_sched_config *cfg);

/* Free the scheduler, its loop and its cached stacks, on the thread that created it.
 * No green thread may be left, joinable ones included: join them first. */
void ld_sched_destroy(ld_sched *s);

/* The loop this scheduler drives, for callers that add libuv handles of their own. */
uv_loop_t *ld_sched_loop(ld_sched *s);

/* From any thread, for watchdogs: the id of the green thread s is running (0 when it
 * runs none) and how many times it has switched into one. A carrier that shows the same
 * running id and switch count on two looks has been blocked in between. */
void ld_sched_observe(const ld_sched *s, uint64_t *running, uint64_t *switches);

/* Run green threads and the loop until no green thread is left and the loop has no
 * active handle. Call on the scheduler's own thread (else -EPERM), not from inside
 * ld_sched_run (else -EBUSY). While green threads are left but none is runnable it
 * waits in the loop, for a timer, I/O or an unpark from another thread. */
int ld_sched_run(ld_sched *s);

/* Spawn a green thread that will run fn(arg) on scheduler s. With out non-NULL the
 * thread is joinable and must be joined; with out NULL it is freed when fn returns.
 * Callable from the scheduler's thread, in or outside a green thread. */
int ld_gt_spawn(ld_sched *s, ld_gt_fn fn, void *arg, ld_gt **out);

/* The running green thread, or NULL outside one. */
ld_gt *ld_gt_self(void);

/* A green thread's id: unique within the process, counted from 1. */
uint64_t ld_gt_id(const ld_gt *g);

/* In a green thread: let every other runnable green thread run once. */
void ld_gt_yield(void);

/* In a green thread: park for ns nanoseconds on a uv timer. ns is rounded up to the
 * timer's millisecond resolution, so the sleep never ends early and at most about a
 * millisecond late (plus scheduling delay); 0 behaves as yield. */
void ld_gt_sleep_ns(uint64_t ns);

/* In a green thread: wait until g has returned, then free it. Returns -EINVAL if g is
 * the caller, not joinable, already being joined, or on another scheduler. A thread
 * that has already returned may also be joined outside a green thread, on its
 * scheduler's thread (after ld_sched_run, say); one still running then gives -EPERM. */
int ld_gt_join(ld_gt *g);

/* In a green thread: park until some thread calls ld_gt_unpark on this one. An unpark
 * that comes first is remembered, so the pair never loses a wake-up. */
void ld_gt_park(void);

/* Make a parked green thread runnable. Safe from any OS thread: a wake-up for another
 * carrier goes through that carrier's uv_async. g must not return (and, if detached,
 * be freed) before this call does. Unparking a sleeping or joining thread does not
 * wake it; the unpark is kept for its next park. */
void ld_gt_unpark(ld_gt *g);

/* A lock for green threads: a contended lock parks the caller instead of blocking its
 * carrier (the monitor of JEP 491). Usable across carriers. */
typedef struct ld_gt_mutex ld_gt_mutex;
int ld_gt_mutex_create(ld_gt_mutex **out);
void ld_gt_mutex_destroy(ld_gt_mutex *m);
void ld_gt_mutex_lock(ld_gt_mutex *m);   /* in a green thread; FIFO hand-off */
void ld_gt_mutex_unlock(ld_gt_mutex *m); /* in a green thread, by the owner */

#endif
