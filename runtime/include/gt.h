/* gt.h: green threads, with a context switch of their own, on carrier OS threads.
 *
 * One scheduler (ld_sched) lives on each carrier OS thread and drives that thread's
 * uv_loop. A green thread runs until it blocks in one of the calls below; the call
 * parks it on a libuv request whose callback makes it runnable again. Green threads
 * never migrate between carriers.
 *
 * A thread's frames live in one of two ways (enum ld_stack_mode below): on a stack of
 * its own (LD_STACK_OWN, what a scheduler gets with no config), or, in copy mode (what
 * loomdist runs by default), on the one stack its carrier runs all its threads on,
 * copied out into a small chunk of the thread's own while it is switched out. The
 * guard, overflow and depot notes below apply to both: a chunk comes from a depot as a
 * stack does, and the carrier's shared stack is guarded as a stack is. Stacks are
 * carved from large
 * mmap'd slabs and kept in a per-scheduler cache for reuse, in front of a stack depot
 * that several schedulers, one after another or at once, may share; chunks likewise.
 * A thread's own struct lives in the top LD_GT_STACK_HEADER bytes of its stack (or at
 * the start of its chunk), so a spawn allocates nothing once the stack is there. Below
 * each stack lies a guard page (a MADV_GUARD_INSTALL guard region, or a PROT_NONE page
 * while a quarter of vm.max_map_count lasts) or, past that, a canary page the scheduler
 * checks at every switch; no number of threads needs a sysctl. A green thread that
 * overflows its stack is reported on stderr as "green thread N overflowed its S KiB
 * stack" before the process dies of SIGSEGV. LOOMDIST_STACK_GUARD=page or =canary in the
 * environment skips the better guards, to try older kernels' paths on any.
 *
 * Functions return 0 or a negative errno. Calls marked "in a green thread" must be made
 * from a green thread; elsewhere they return -EPERM or do nothing, as stated.
 */
#ifndef LD_GT_H
#define LD_GT_H

#include <stddef.h>
#include <stdint.h>

struct uv_loop_s; /* libuv's loop: include <uv.h> to use one */

typedef struct ld_sched ld_sched; /* one per carrier thread */
typedef struct ld_gt ld_gt;       /* one green thread */
typedef void (*ld_gt_fn)(void *arg);

#define LD_GT_STACK_DEFAULT (64u * 1024u)

/* The top of every stack that holds the thread's struct instead of its frames. */
#define LD_GT_STACK_HEADER 320u

/* Where a green thread's frames live while it is switched out.
 *
 * LD_STACK_OWN   each thread has a stack of its own. Its top page stays resident while
 *                it waits: about 4 KiB per parked thread.
 * LD_STACK_COPY  the threads of a carrier all run on one stack of the carrier's, with a
 *                guard page below it. When another thread needs that stack, the used
 *                part of the last one's is copied into a chunk of LD_GT_STACK_CHUNK
 *                bytes that also holds its struct, and copied back before it runs
 *                again: Loom's freeze and thaw. A parked thread costs one chunk (a
 *                deeper stack spills the rest to the heap), and a yield goes through
 *                the scheduler. A pointer into a green thread's stack is then good
 *                only while that thread runs: no other thread may keep one. Should
 *                the heap refuse a spill while the scheduler freezes a thread, there
 *                is no caller to return the error to, and the thread's frames would
 *                be lost: the process prints "loomdist: out of memory freezing green
 *                thread N's stack" and aborts.
 */
enum ld_stack_mode { LD_STACK_OWN, LD_STACK_COPY };

/* Whether this build can run threads in `mode`: copy mode needs an assembly context
 * switch, since a ucontext keeps pointers into its own stack. */
int ld_stack_mode_supported(enum ld_stack_mode mode);

/* Bytes of a copy-mode chunk: the thread's struct, then its frozen frames. */
#define LD_GT_STACK_CHUNK 192u

/* The resident memory n parked green threads cost, for a check before a run that
 * they fit: in own mode, each stack's top page and the page-table entries of its
 * stack_size bytes (rounded up to pages; 0: the default) and guard page; in copy mode,
 * a chunk each. Frames deeper than a chunk's room, their heap spills, each carrier's
 * own stack and whatever the threads allocate are not counted. */
uint64_t ld_gt_resident_bytes(enum ld_stack_mode mode, size_t stack_size, size_t n);

/* Stacks (or, in copy mode, chunks) for any number of schedulers: freed ones keep
 * their pages, so a scheduler made later finds them warm. Thread-safe. */
typedef struct ld_stack_depot ld_stack_depot;

/* A depot of stacks of `size` bytes each (rounded up to pages; 0: the default; at most
 * 1 GiB), the top LD_GT_STACK_HEADER of them for the thread's struct; in copy mode, of
 * chunks, and `size` is the stack each carrier runs its threads on. -ENOMEM, -EINVAL. */
int ld_stack_depot_create(ld_stack_depot **out, size_t size, enum ld_stack_mode mode);

/* Make sure n stacks are free and their top pages resident (n chunks, in copy mode),
 * so that n spawns fault in no memory: for a benchmark, before its clock starts.
 * -ENOMEM if the kernel refuses. */
int ld_stack_depot_reserve(ld_stack_depot *p, size_t n);

/* Unmap every stack. No scheduler may be using the depot any more. */
void ld_stack_depot_destroy(ld_stack_depot *p);

typedef struct ld_sched_config {
    size_t stack_size;       /* bytes per stack, rounded up to pages; 0: default; at most
                                1 GiB; ignored with a depot, whose size applies */
    enum ld_stack_mode mode; /* without a depot; a depot's mode applies */
    size_t stack_cache;      /* freed stacks the scheduler keeps for itself before they go
                                back to the depot; 0: 1024 */
    ld_stack_depot *depot;   /* where stacks come from and go back to when the scheduler
                                ends; NULL: a depot of its own, unmapped with it */
    unsigned trim_after;     /* "trim after K small freezes". 0: never trim. K: after K
                                freezes in a row of one thread, each using at most half
                                of its capacity, shrink the capacity to the largest of
                                those K: copy mode reallocs the spill down (or frees
                                it); own mode madvise(MADV_DONTNEED)s the whole pages
                                below the page under sp, and the high-water mark drops
                                to the current depth. Own mode's yields then go through
                                the scheduler, which trims from its own stack. What is
                                counted and trimmed: gt_stats.h */
} ld_sched_config;

/* Create the scheduler of the calling thread, with a uv_loop of its own. cfg may be
 * NULL. One scheduler per thread at a time: a second call returns -EBUSY; at most
 * 4,096 in a process at once: beyond, -EAGAIN. The first
 * call in the process installs the SIGSEGV handler that reports overflows; it chains
 * to the handler it displaced, so create schedulers after MPI_Init or anything else
 * that installs a SIGSEGV handler of its own. */
int ld_sched_create(ld_sched **out, const ld_sched_config *cfg);

/* Free the scheduler, its loop and its cached stacks, on the thread that created it.
 * No green thread may be left, joinable ones included: join them first. */
void ld_sched_destroy(ld_sched *s);

/* The loop this scheduler drives, for callers that add libuv handles of their own. */
struct uv_loop_s *ld_sched_loop(ld_sched *s);

/* From any thread, for watchdogs: the id of the green thread s last switched into (0
 * between batches of resumes, and while it waits in its loop), and a count of its
 * switches into threads, which moves on at the end of each batch. A carrier that shows
 * the same nonzero id and count on two looks finished no batch in between: one thread
 * has held it, unless the batch switched away and came back to that same thread. */
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

/* Spawn n detached green threads on s, each to run fn(arg), queued in that order: n
 * calls of ld_gt_spawn with out NULL, whose checks and queueing are shared. *spawned
 * tells how many were, n unless an error is returned. */
int ld_gt_spawn_n(ld_sched *s, ld_gt_fn fn, void *arg, size_t n, size_t *spawned);

/* The running green thread, or NULL outside one. */
ld_gt *ld_gt_self(void);

/* A green thread's id: counted from 1, and unique within the process among its first
 * 4,294,967,295 threads (ids are 32 bits, and then wrap, 0 excepted). */
uint64_t ld_gt_id(const ld_gt *g);

/* In a green thread: let every other runnable green thread run once. */
void ld_gt_yield(void);

/* A busy scheduler looks at the clock at least once every LD_GT_BATCH resumes. */
#define LD_GT_BATCH 128

/* In a green thread: park for ns nanoseconds, a deadline in the carrier's set of
 * deadlines (deadlines.h), counted from the scheduler's next look at the clock, so
 * that the sleep reads no clock of its own. The sleep never ends early; a busy
 * carrier wakes it within a tick of 16.4 µs, and an idle one at most about 150 µs
 * late, plus scheduling delay. Sleeping costs the same at a million sleepers as at
 * one. 0 behaves as yield. Should the set fail to grow (out of memory), the thread
 * yields until its deadline instead: it burns CPU, but still never wakes early. */
void ld_gt_sleep_ns(uint64_t ns);

/* In a green thread: wait until g has returned, then free it (its stack goes back to
 * the cache). Returns -EINVAL if g is
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
 * carrier (the monitor of JEP 491). Usable across carriers, by green threads only:
 * outside a green thread there is nothing to park, so lock and unlock do nothing and
 * exclude nothing, and an OS thread must not count on them. An unlock by a thread
 * that does not own the lock does nothing either. */
typedef struct ld_gt_mutex ld_gt_mutex;
int ld_gt_mutex_create(ld_gt_mutex **out);
void ld_gt_mutex_destroy(ld_gt_mutex *m);
void ld_gt_mutex_lock(ld_gt_mutex *m);   /* in a green thread; FIFO hand-off */
void ld_gt_mutex_unlock(ld_gt_mutex *m); /* in a green thread, by the owner */

#endif
