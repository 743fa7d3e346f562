/* gt_sched.c: the scheduler of one carrier thread: its run queue, spawn and join, and
 * the blocking calls (yield, sleep, park, suspend) that park a green thread until a
 * callback makes it runnable again. Sleepers wait in a set of deadlines on the
 * carrier's uv_loop (deadlines.h).
 *
 * A green thread that blocks swaps to the scheduler's own context, which resumes the
 * next runnable one. A yield, with stacks of their own, may instead switch straight
 * to the next runnable thread that has started, up to a batch of such switches before
 * the scheduler gets the carrier back; in copy mode every switch goes through the
 * scheduler, which moves the frames. Each carrier's state is touched only by that
 * carrier, except the remote queue, where other OS threads post wake-ups under a mutex
 * and a uv_async tells the carrier to collect them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "deadlines.h"
#include "gt.h"
#include "gt_copy.h"
#include "gt_overflow.h"
#include "gt_sched.h"
#include "gt_stack.h"
#include "gt_stats.h"
#include "gt_switch.h"

/* Resumes between two looks at the clock while threads are runnable (gt.h); the loop
 * itself is polled at most every LD_SCHED_POLL_NS then, so its system call costs a busy
 * carrier next to nothing, while I/O and remote wake-ups wait 50 µs at most. Sleepers do
 * not wait for the poll: their deadlines are expired at every look at the clock. */
#define LD_SCHED_BATCH LD_GT_BATCH
#define LD_SCHED_POLL_NS 50000u

/* How far back in the run queue the scheduler starts fetching a thread's memory, and
 * with an own stack how many bytes from its saved stack pointer: a parked settle
 * trade's frames with its saved registers. */
#define LD_SCHED_PREFETCH 6
#define LD_SCHED_PREFETCH_FRAMES 320u

/* The batch loop, with each resume's freeze and thaw inlined into it, is built twice
 * on x86-64, for AVX2 and without, and the loader picks one (an ifunc): a frozen line
 * then moves as two 32-byte vectors, not four 16-byte ones (gt_copy.h), 16 fewer
 * instructions a models task's life. GCC's build only: clang will not flatten a
 * function it clones, and the copies must be inlined to be cloned with it. Not under
 * a sanitizer either, whose copies go the told way anyway. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&                   \
    !defined(LD_CTX_ASAN) && !defined(LD_CTX_TSAN) && defined(__has_attribute)
#if __has_attribute(target_clones) && __has_attribute(flatten)
#define LD_SCHED_BATCH_CLONED __attribute__((flatten, target_clones("avx2", "default")))
#endif
#endif
#ifndef LD_SCHED_BATCH_CLONED
#define LD_SCHED_BATCH_CLONED
#endif

#define LD_SCHED_CACHE_DEFAULT 1024u

enum ld_gt_state {
    GT_READY,   /* in the run queue (a sleeper whose deadline fired keeps GT_SLEEPING) */
    GT_RUNNING, /* on the carrier now */
    GT_PARKED,  /* in ld_gt_park, until an unpark */
    GT_SUSPENDED, /* in ld_gt_suspend, until a resume */
    GT_SLEEPING,  /* in ld_gt_sleep_ns, until its deadline passes */
    GT_JOINING,   /* in ld_gt_join, until the joined thread returns */
    GT_DONE       /* fn returned; joinable threads wait here to be joined */
};

/* Wake-ups posted from other OS threads, delivered later on the owner's carrier. */
enum { GT_WAKE_UNPARK = 1u, GT_WAKE_RESUME = 2u, GT_WAKE_MASK = 3u };

/* A thread's flags, written on its own carrier alone. */
enum {
    GT_JOINABLE = 1u,
    GT_PERMIT = 2u,  /* an unpark came before its park */
    GT_PENDING = 4u, /* a resume came before its suspend */
    GT_STARTED = 8u  /* has run: frames to switch to, a yield's to reach */
};

/* A green thread lives at the start of its stack's header (see gt_stack.h), or in
 * copy mode of its chunk: a thread and its stack are one allocation, found from each
 * other. It is one cache line, which a parked thread's chunk holds with its two lines
 * of frames. What a thread needs only before its first run shares its bytes with what
 * it needs only after: its function and argument with its frozen frames, the control
 * words it starts with with its trim counts (the context's spare). */
struct ld_gt {
    ld_ctx ctx;
    union {
        struct { /* until its first run */
            ld_gt_fn fn;
            void *arg;
        };
        ld_copy_frozen
            frozen; /* copy mode: its frames while another's are on the stack */
    };
    ld_gt *joiner;
    ld_gt *wait_next; /* a lock's queue link, for its owner (gt_mutex.c) */
    /* The remote queue's link, under sched->remote_lock, with the GT_WAKE_* posted and
     * not yet delivered in its low bits: nonzero exactly while the thread is queued. */
    _Atomic uintptr_t remote;
    uint32_t id;
    uint16_t sched;      /* its scheduler's place in sched_registry */
    unsigned char state; /* enum ld_gt_state */
    unsigned char flags; /* GT_JOINABLE and the rest */
};

/* The trim counts, in the context's spare once the thread has started: freezes in a
 * row using at most half the capacity, and the most bytes one of them used. */
#define GT_SMALL_RUN(g) ((g)->ctx.spare[0])
#define GT_SMALL_MAX(g) ((g)->ctx.spare[1])

_Static_assert(
    sizeof(ld_gt) <= LD_STACK_CHUNK_HEADER,
    "ld_gt must fit in its chunk's header, and before an own stack's ld_stack");
_Static_assert(_Alignof(ld_gt) > GT_WAKE_MASK, "the remote link's low bits are free");
_Static_assert(LD_STACK_HEADER % 16 == 0,
               "an own stack's top, its header, is 16-aligned");

/* Own mode: the stack whose header g lives in. */
static inline ld_stack *gt_stack(ld_gt *g)
{
    return ld_slot_stack((ld_slot *)g);
}

struct ld_sched {
    ld_ctx ctx; /* the carrier's own context, where ld_sched_run runs */
    ld_gt *current;
    uint16_t index; /* its place in sched_registry */
    ld_gt **runq;   /* the run queue, a ring of runq_cap (a power of 2) >= live */
    size_t runq_cap;
    size_t runq_head;
    size_t runq_len;
    size_t live;     /* spawned threads whose fn has not returned */
    unsigned direct; /* yields left that may switch thread to thread, this batch */
    bool running;
    bool in_wait;        /* inside the blocking uv_run of ld_sched_run */
    unsigned trim_after; /* ld_sched_config's; 0: never trim */
    size_t page;         /* ld_stack_page(), for own stacks' touched bytes */
    ld_stack_cache stacks;
    ld_stack run;  /* copy mode: the stack every thread runs on; run.lo NULL otherwise */
    char *run_top; /* copy mode: its top, run.lo + run.size, where frozen frames end */
    ld_gt *owner;  /* copy mode: the thread whose frames are on it now, if any */
    uv_loop_t loop;
    uv_async_t wake; /* referenced exactly while live > 0 */
    pthread_mutex_t remote_lock;
    ld_gt *remote_head;
    ld_gt *remote_tail;
    ld_overflow_watch watch;
    ld_deadlines *sleepers; /* threads in ld_gt_sleep_ns, by deadline */
    uint64_t polled_at;     /* uv_hrtime() of the last poll of the loop */
    uint64_t id_next;       /* the ids this scheduler took and has not given out yet */
    uint64_t id_end;
    /* For watchdogs on other threads: the thread last switched into (0 between
     * batches), and the switches counted at the end of each batch (sched_batch_done).
     * Written by this carrier alone, so plain relaxed stores suffice. */
    _Atomic uint64_t observed_id;
    _Atomic uint64_t switches;
    /* The last freezes counted, not yet in the histograms: one capacity and one use,
     * repeated `times`. Threads mostly park where they parked before, so most freezes
     * cost a comparison and an increment here. */
    uint64_t last_capacity;
    uint64_t last_times;
    uint32_t last_used;
    uint32_t last_touched;   /* own mode: the touched depth of that freeze's stack */
    ld_gt_stack_stats stats; /* last: the histograms are large, and cold but for a few
                                lines */
};

/* The scheduler of this carrier thread: the runtime's only per-thread state. */
static _Thread_local ld_sched *sched_self;

/* Every scheduler alive, by the index its threads keep (ld_gt.sched): two bytes of a
 * thread's struct where a pointer would take eight. Slots are taken and given back
 * under the lock; a post from another thread reads its thread's slot without it,
 * since it can reach the thread only while the scheduler lives. */
#define LD_SCHED_MAX 4096u
static ld_sched *sched_registry[LD_SCHED_MAX];
static pthread_mutex_t sched_registry_lock = PTHREAD_MUTEX_INITIALIZER;

static int sched_register(ld_sched *s)
{
    unsigned i;
    int rc = -EAGAIN;

    pthread_mutex_lock(&sched_registry_lock);
    for (i = 0; i < LD_SCHED_MAX; i++) {
        if (sched_registry[i] == NULL) {
            sched_registry[i] = s;
            s->index = (uint16_t)i;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&sched_registry_lock);
    return rc;
}

static void sched_unregister(const ld_sched *s)
{
    pthread_mutex_lock(&sched_registry_lock);
    sched_registry[s->index] = NULL;
    pthread_mutex_unlock(&sched_registry_lock);
}

/* Ids are unique in the process, as gt.h promises, so they come from one counter; a
 * scheduler takes them LD_SCHED_IDS at a time (or a batch's worth, if more), so
 * carriers spawning at once do not fight over its cache line. A spawn takes the ids of
 * its whole batch at once: the first of n in a row. An id is the counter's low 32 bits,
 * and never 0 (which a watchdog reads as no thread): a block that would hold a
 * multiple of 2^32 is passed over for the next. */
#define LD_SCHED_IDS 1024u
static _Atomic uint64_t gt_next_id = 1;

static uint32_t sched_take_ids(ld_sched *s, size_t n)
{
    uint64_t first;

    if (s->id_end - s->id_next < n) {
        uint64_t take = n > LD_SCHED_IDS ? n : LD_SCHED_IDS;

        do
            s->id_next =
                atomic_fetch_add_explicit(&gt_next_id, take, memory_order_relaxed);
        while ((uint32_t)s->id_next == 0 ||
               (uint32_t)s->id_next > UINT32_MAX - (take - 1));
        s->id_end = s->id_next + take;
    }
    first = s->id_next;
    s->id_next += n;
    return (uint32_t)first;
}

/* The run queue is FIFO: a thread that yields runs again after every other runnable
 * one, however often the loop is polled in between. It is a ring of pointers, not a
 * list through the threads, so queueing a thread touches none of its memory and the
 * scheduler can fetch the threads due next ahead of time. A thread is queued at most
 * once, so a ring as large as the live threads never overflows. */
static void runq_push(ld_sched *s, ld_gt *g)
{
    s->runq[(s->runq_head + s->runq_len++) & (s->runq_cap - 1)] = g;
}

static ld_gt *runq_pop(ld_sched *s)
{
    ld_gt *g = s->runq[s->runq_head];

    s->runq_head = (s->runq_head + 1) & (s->runq_cap - 1);
    s->runq_len--;
    return g;
}

/* The thread `ahead` places behind the head of the queue; NULL past its end. */
static ld_gt *runq_peek(const ld_sched *s, size_t ahead)
{
    return ahead < s->runq_len ? s->runq[(s->runq_head + ahead) & (s->runq_cap - 1)]
                               : NULL;
}

/* A ring doubled until it holds `need`, the queue kept in order; out of a spawn's
 * way. */
static __attribute__((noinline)) int runq_grow(ld_sched *s, size_t need)
{
    size_t cap = s->runq_cap ? s->runq_cap * 2 : 64, i;
    ld_gt **ring;

    while (cap < need)
        cap *= 2;

    ring = malloc(cap * sizeof *ring);
    if (ring == NULL)
        return -ENOMEM;
    for (i = 0; i < s->runq_len; i++)
        ring[i] = runq_peek(s, i);
    free(s->runq);
    s->runq = ring;
    s->runq_cap = cap;
    s->runq_head = 0;
    return 0;
}

/* Before a spawn: room in the ring for n more live threads. */
static int runq_reserve(ld_sched *s, size_t n)
{
    return s->live + n <= s->runq_cap ? 0 : runq_grow(s, s->live + n);
}

/* A thread made runnable by a libuv callback while the loop waits (a uv timer due at
 * the top of uv_run, say) must end that wait, or the loop would block on with a
 * runnable thread; uv_stop makes libuv poll without blocking and return. */
static void sched_end_wait(ld_sched *s)
{
    if (s->in_wait)
        uv_stop(&s->loop);
}

static void sched_make_ready(ld_sched *s, ld_gt *g)
{
    g->state = GT_READY;
    runq_push(s, g);
    sched_end_wait(s);
}

/* While a green thread lives the async keeps the loop alive, so a carrier whose
 * threads are all parked waits in the loop for a remote wake-up; once none is left
 * it must not, or ld_sched_run would never return. */
static void sched_live_add(ld_sched *s, size_t n)
{
    if (s->live == 0 && n != 0)
        uv_ref((uv_handle_t *)&s->wake);
    s->live += n;
}

static void sched_live_dec(ld_sched *s)
{
    if (--s->live == 0)
        uv_unref((uv_handle_t *)&s->wake);
}

/* Leave the running green thread for the scheduler; returns once it is resumed. */
static void gt_block(ld_gt *g)
{
    ld_ctx_swap(&g->ctx, &sched_self->ctx);
}

/* A wake-up arriving on the owner's carrier, s. One that finds its thread not waiting
 * for it is kept, so a wake-up that beats its wait is never lost. */
static void gt_deliver(ld_sched *s, ld_gt *g, unsigned wake)
{
    if (wake & GT_WAKE_UNPARK) {
        if (g->state == GT_PARKED)
            sched_make_ready(s, g);
        else
            g->flags |= GT_PERMIT;
    }
    if (wake & GT_WAKE_RESUME) {
        if (g->state == GT_SUSPENDED)
            sched_make_ready(s, g);
        else
            g->flags |= GT_PENDING;
    }
}

/* The next thread in the remote queue after one whose link reads `link`. */
static ld_gt *remote_next(uintptr_t link)
{
    return (ld_gt *)(link & ~(uintptr_t)GT_WAKE_MASK);
}

/* Under the remote lock: queued g's next becomes `next`, its wake-ups kept. */
static void remote_link(ld_gt *g, ld_gt *next)
{
    uintptr_t wake =
        atomic_load_explicit(&g->remote, memory_order_relaxed) & GT_WAKE_MASK;

    atomic_store_explicit(&g->remote, wake | (uintptr_t)next, memory_order_relaxed);
}

/* Post a wake-up from another OS thread. The async is sent while the lock is held: the
 * owner takes the lock to collect the wake-up and to tear the scheduler down, so the
 * scheduler outlives this call. Two posts before a collection merge into one entry. */
static void sched_post(ld_gt *g, unsigned wake)
{
    ld_sched *s = sched_registry[g->sched];
    uintptr_t old;

    pthread_mutex_lock(&s->remote_lock);
    old = atomic_load_explicit(&g->remote, memory_order_relaxed);
    if (old == 0) {
        if (s->remote_tail != NULL)
            remote_link(s->remote_tail, g);
        else
            s->remote_head = g;
        s->remote_tail = g;
    }
    atomic_store_explicit(&g->remote, old | wake, memory_order_relaxed);
    uv_async_send(&s->wake);
    pthread_mutex_unlock(&s->remote_lock);
}

/* The async callback: collect every posted wake-up. Delivering under the lock keeps a
 * thread that posts again meanwhile from relinking an entry we are still walking. */
static void sched_on_wake(uv_async_t *a)
{
    ld_sched *s = a->data;
    ld_gt *g, *next;

    pthread_mutex_lock(&s->remote_lock);
    for (g = s->remote_head; g != NULL; g = next) {
        uintptr_t link = atomic_exchange_explicit(&g->remote, 0, memory_order_relaxed);

        next = remote_next(link);
        gt_deliver(s, g, (unsigned)(link & GT_WAKE_MASK));
    }
    s->remote_head = NULL;
    s->remote_tail = NULL;
    pthread_mutex_unlock(&s->remote_lock);
}

/* A thread that returns with a wake-up still queued (an unpark it never parked for)
 * leaves the remote queue before it is freed. */
static void sched_forget_remote(ld_sched *s, ld_gt *g)
{
    ld_gt *at, *prev = NULL, *next;

    if (atomic_load_explicit(&g->remote, memory_order_acquire) == 0)
        return;
    pthread_mutex_lock(&s->remote_lock);
    for (at = s->remote_head; at != NULL && at != g;
         at = remote_next(atomic_load_explicit(&at->remote, memory_order_relaxed)))
        prev = at;
    if (at == g) {
        next = remote_next(atomic_load_explicit(&g->remote, memory_order_relaxed));
        if (prev != NULL)
            remote_link(prev, next);
        else
            s->remote_head = next;
        if (s->remote_tail == g)
            s->remote_tail = prev;
    }
    atomic_store_explicit(&g->remote, 0, memory_order_relaxed);
    pthread_mutex_unlock(&s->remote_lock);
}

/* --- Stack capacity (gt_stats.h) ---------------------------------------------------- */

/* The capacity g holds for its frames while switched out: in copy mode its chunk's
 * room and its spill, with an own stack the pages it has touched. */
static uint64_t gt_capacity(const ld_sched *s, ld_gt *g)
{
    if (s->run.lo != NULL)
        return LD_STACK_CHUNK_ROOM + (uint64_t)g->frozen.spill_cap;
    return ld_stack_touched_bytes(gt_stack(g), s->page);
}

/* A spawned thread's capacity becomes resident. In copy mode that is its chunk's room,
 * as it has no spill yet: the spawn adds it for the whole batch (said outright, not
 * read back from the chunks just written: that load waits for the cold line). An own
 * stack is either carved fresh, its header's page first touched, or reused with what
 * it had touched; this counts it. */
static inline __attribute__((always_inline)) void sched_count_spawn_own(ld_sched *s,
                                                                        ld_gt *g)
{
    ld_gt_stack_stats *st = &s->stats;
    ld_stack *stack = gt_stack(g);

    st->chunk_allocs += stack->fresh;
    st->chunk_reuses += !stack->fresh;
    if (stack->fresh)
        st->bytes_allocated += gt_capacity(s, g);
    stack->fresh = 0;
    st->bytes_resident += gt_capacity(s, g);
}

/* "Trim after K small freezes": the largest of the last trim_after freezes of g when
 * each used at most half its capacity, else 0 (a freeze always uses some bytes). */
static uint32_t gt_small_freezes(const ld_sched *s, ld_gt *g, uint32_t used, uint64_t cap)
{
    uint32_t keep;

    if ((uint64_t)used * 2 > cap) {
        GT_SMALL_RUN(g) = 0;
        GT_SMALL_MAX(g) = 0;
        return 0;
    }
    if (used > GT_SMALL_MAX(g))
        GT_SMALL_MAX(g) = used;
    if (++GT_SMALL_RUN(g) < s->trim_after)
        return 0;
    keep = GT_SMALL_MAX(g);
    GT_SMALL_RUN(g) = 0;
    GT_SMALL_MAX(g) = 0;
    return keep;
}

static void sched_count_trim(ld_sched *s, uint64_t given)
{
    if (given == 0)
        return;
    s->stats.chunk_trims++;
    s->stats.bytes_trimmed += given;
    s->stats.bytes_resident -= given;
}

/* The freezes held back in s, added to the histograms of st. */
static void sched_flush_freezes(const ld_sched *s, ld_gt_stack_stats *st)
{
    ld_hist_add_n(&st->capacity, s->last_capacity, s->last_times);
    ld_hist_add_n(&st->frozen, s->last_used, s->last_times);
}

/* Every freeze lands in both histograms, at the capacity the thread keeps; a run of
 * equal ones goes in at once when it ends. The histograms' count is the freezes'.
 * Inlined, as sched_out_own is: on a direct yield's path a call costs as much as the
 * counting. */
static inline __attribute__((always_inline)) void
sched_count_freeze(ld_sched *s, uint64_t capacity, uint32_t used)
{
    if (capacity == s->last_capacity && used == s->last_used) {
        s->last_times++;
        return;
    }
    sched_flush_freezes(s, &s->stats);
    s->last_capacity = capacity;
    s->last_used = used;
    s->last_times = 1;
}

/* Copy mode, as g switches out: its spill is sized for the frames it left, which the
 * freeze will copy once another thread needs the run stack. Frames the room holds, of
 * a thread with no spill and no trim to weigh, need only counting: the path nearly
 * every park takes, a few compares instead of the sizing's. Should the heap refuse,
 * there is no caller to return the error to, and the next thread's frames would
 * overwrite g's: gt.h states that a freeze without memory aborts. */
static void sched_out_copy(ld_sched *s, ld_gt *g)
{
    ld_gt_stack_stats *st = &s->stats;
    uint32_t len = ld_copy_len(g->ctx.sp, s->run_top);
    uint32_t had = g->frozen.spill_cap, keep;
    int room;

    if (len <= LD_STACK_CHUNK_ROOM && had == 0 && s->trim_after == 0) {
        st->chunk_reuses++; /* the common case: the room holds it, nothing to weigh */
        sched_count_freeze(s, LD_STACK_CHUNK_ROOM, len);
        return;
    }
    room = ld_copy_reserve(&g->frozen, len);

    if (room == LD_COPY_FITS) {
        st->chunk_reuses++;
    } else if (room < 0) {
        fprintf(stderr, "loomdist: out of memory freezing green thread %llu's stack\n",
                (unsigned long long)g->id);
        abort();
    } else {
        st->chunk_allocs += room == LD_COPY_ALLOC;
        st->chunk_grows += room == LD_COPY_GREW;
        st->bytes_allocated += g->frozen.spill_cap;
        st->bytes_resident += g->frozen.spill_cap - had;
    }
    if (s->trim_after != 0 &&
        (keep = gt_small_freezes(s, g, len, gt_capacity(s, g))) != 0)
        sched_count_trim(s, ld_copy_trim(&g->frozen, keep));
    sched_count_freeze(s, gt_capacity(s, g), len);
}

/* Own stacks, as g switches out: its depth raises the stack's high-water mark, and a
 * trim gives back what lies below it. */
static __attribute__((noinline)) void sched_out_own_counted(ld_sched *s, ld_gt *g,
                                                            uint32_t depth)
{
    ld_stack *st = gt_stack(g);
    uint64_t capacity;

    if (depth > st->touched) {
        uint64_t had = ld_stack_touched_bytes(st, s->page), grown;

        st->touched = depth;
        grown = ld_stack_touched_bytes(st, s->page) - had;
        s->stats.bytes_allocated += grown;
        s->stats.bytes_resident += grown;
    }
    capacity = ld_stack_touched_bytes(st, s->page);
    if (s->trim_after != 0 && gt_small_freezes(s, g, depth, capacity) != 0) {
        sched_count_trim(s, ld_stack_trim(st, g->ctx.sp));
        capacity = ld_stack_touched_bytes(st, s->page);
    }
    sched_count_freeze(s, capacity, depth);
    s->last_touched = st->touched;
}

/* A freeze of an own stack that repeats the last one counted, at the same depth of a
 * stack as deep as that one's (so no growth, and the same capacity), with no trim to
 * weigh, is one more of a run: a thread that yields in a loop pays two compares and
 * an increment. Inlined into the direct yield, where the counting runs as the thread
 * resumes; the rest is sched_out_own_counted. The trim must run off g's stack, so own
 * mode's yields go through the scheduler when trimming is on (sched_direct_next). */
static inline __attribute__((always_inline)) void sched_out_own(ld_sched *s, ld_gt *g)
{
    uint32_t depth = (uint32_t)((char *)g - (char *)g->ctx.sp);

    if (depth == s->last_used && gt_stack(g)->touched == s->last_touched &&
        s->trim_after == 0) {
        s->last_times++;
        return;
    }
    sched_out_own_counted(s, g, depth);
}

/* A thread that will resume has switched out: a freeze, in either mode. */
static void sched_switched_out(ld_sched *s, ld_gt *g)
{
    if (s->run.lo != NULL)
        sched_out_copy(s, g);
    else
        sched_out_own(s, g);
}

void ld_sched_stack_stats(const ld_sched *s, ld_gt_stack_stats *out)
{
    *out = s->stats;
    sched_flush_freezes(s, out);
    out->freezes = ld_hist_count(&out->capacity);
}

uint64_t ld_sched_stack_spills(const ld_sched *s)
{
    return s->run.lo != NULL ? s->stats.chunk_allocs + s->stats.chunk_grows : 0;
}

void ld_sched_stack_stats_reset(ld_sched *s)
{
    uint64_t resident = s->stats.bytes_resident;

    memset(&s->stats, 0, sizeof s->stats);
    s->stats.bytes_resident = resident;
    s->last_times = 0;
}

/* --- Threads --------------------------------------------------------------------------
 */

/* The struct lives on the stack (or chunk), so freeing the thread is giving it back.
 * Inlined into the end of a detached thread, once a life. */
static inline __attribute__((always_inline)) void gt_free(ld_sched *s, ld_gt *g)
{
    s->stats.bytes_resident -= gt_capacity(s, g);
    if (g->frozen.spill != NULL) /* most threads never spill */
        ld_copy_release(&g->frozen);
    ld_stack_put(&s->stacks, (ld_slot *)g);
}

/* After a thread's last switch, on the scheduler's stack: a detached thread's stack is
 * reused now; a joinable one's waits, with its struct, for the joiner. */
static void gt_finish(ld_sched *s, ld_gt *g)
{
    ld_ctx_release(&g->ctx);
    if (s->owner == g)
        s->owner = NULL; /* its frames are dead: nothing to freeze */
    sched_forget_remote(s, g);
    sched_live_dec(s);
    if (!(g->flags & GT_JOINABLE))
        gt_free(s, g);
    else if (g->joiner != NULL)
        sched_make_ready(s, g->joiner);
}

/* Every green thread starts here, on its own stack, and leaves with a last switch.
 * Its function and argument are read, and their bytes become its frozen frames' (none
 * yet), as the control words' became its trim counts' (none yet). The thread is found
 * again through its carrier's scheduler, which it cannot leave, rather than kept
 * across fn: a register kept is a slot of the frame, which copy mode moves at every
 * switch. */
_Noreturn static void gt_entry(void *arg)
{
    ld_gt *g = arg;
    ld_gt_fn fn;

    ld_ctx_started(&sched_self->ctx);
    fn = g->fn;
    arg = g->arg;
    g->frozen = (ld_copy_frozen){0};
    GT_SMALL_RUN(g) = 0;
    GT_SMALL_MAX(g) = 0;
    fn(arg);
    g = sched_self->current;
    g->state = GT_DONE;
    ld_ctx_leave(&sched_self->ctx);
}

/* g becomes the running thread, for the scheduler and for watchdogs. */
static void sched_enter(ld_sched *s, ld_gt *g)
{
    s->current = g;
    g->state = GT_RUNNING;
    atomic_store_explicit(&s->observed_id, g->id, memory_order_relaxed);
}

/* After a batch, for watchdogs: no thread runs, and the switch count moves on by the
 * batch's resumes. Counted a batch at a time, not a resume at a time, as gt.h allows:
 * two looks that see one thread and one count saw no batch end in between. */
static void sched_batch_done(ld_sched *s, unsigned resumes)
{
    uint64_t n = atomic_load_explicit(&s->switches, memory_order_relaxed);

    atomic_store_explicit(&s->switches, n + resumes, memory_order_relaxed);
    atomic_store_explicit(&s->observed_id, 0, memory_order_relaxed);
}

/* Own mode, as g switches out (to the scheduler, or straight to the next thread on a
 * yield): a canary stack's canary must be intact, and its whole page once the thread
 * is done. */
static void sched_check_own(ld_gt *g)
{
    ld_stack *st = gt_stack(g);

    if (!ld_stack_intact(st) || (g->state == GT_DONE && !ld_stack_intact_at_end(st)))
        ld_overflow_die(g->id, st);
}

/* Copy mode, before g runs: the run stack changes hands. The frames of its last owner
 * are frozen into the spill sized at its switch-out (sched_out_copy); g's are thawed
 * by the caller, which knows whether it has any (a new thread starts at the stack's
 * top). Freezing waits until now, so a thread that runs again before any other copies
 * nothing. Returns whether g's frames must come back. */
static bool sched_give_run_stack(ld_sched *s, ld_gt *g)
{
    ld_gt *prev = s->owner;

    if (prev == g)
        return false;
    if (prev != NULL)
        ld_copy_freeze((ld_slot *)prev, &prev->frozen, prev->ctx.sp, s->run_top);
    s->owner = g;
    return true;
}

/* Run g until the running thread, g or one it yielded to, blocks or returns. A new
 * thread's first run calls its entry at its stack's top. Whether g has started is
 * asked once, for its thaw and its switch both. */
static void sched_resume(ld_sched *s, ld_gt *g)
{
    bool moved = s->run.lo != NULL && sched_give_run_stack(s, g);

    sched_enter(s, g);
    s->direct = LD_SCHED_BATCH;
    if (g->flags & GT_STARTED) {
        if (moved)
            ld_copy_thaw((ld_slot *)g, &g->frozen, s->run_top);
        ld_ctx_swap(&s->ctx, &g->ctx);
    } else {
        g->flags |= GT_STARTED;
        ld_ctx_begin(&s->ctx, &g->ctx, gt_entry, g);
    }
    g = s->current;
    s->current = NULL;
    if (s->run.lo == NULL) /* copy mode's run stack has a guard page of its own */
        sched_check_own(g);
    if (g->state == GT_DONE)
        gt_finish(s, g);
    else
        sched_switched_out(s, g);
}

/* With many threads, each lives in memory of its own that has long left the cache:
 * start fetching the struct and saved frames of a thread a few places back in the
 * queue, so that its misses overlap with the work of the ones in front of it. In copy
 * mode they are its chunk, the lines a spawn fetches (ld_stack_prefetch), at fixed
 * offsets from the struct; with an own stack, the struct and the frames up from its
 * saved stack pointer, which must be read first (fetching the lines just below the
 * header instead missed the saved registers of deeper frames: the micro job's park
 * at a million sleepers took 198-251 ns against 81-135). They are fetched for
 * writing: a resume writes the struct, and the thread's next freeze its frames, so a
 * line fetched only for reading would be fetched again for ownership (a million
 * settle trades took 1.03-1.32 s of CPU against 1.28-1.69 s with the frames fetched
 * for reading, four alternated runs each on a 2-CPU AMD EPYC). */
static inline __attribute__((always_inline)) void sched_prefetch(const ld_sched *s,
                                                                 const ld_gt *g)
{
    size_t off;

    if (s->run.lo != NULL) {
        ld_stack_prefetch(&s->stacks, (const ld_slot *)g);
        return;
    }
    __builtin_prefetch(g, 1);
    __builtin_prefetch((const char *)g + 64, 1);
    for (off = 0; off < LD_SCHED_PREFETCH_FRAMES; off += 64)
        __builtin_prefetch((const char *)g->ctx.sp + off, 1);
}

LD_SCHED_BATCH_CLONED static void sched_run_batch(ld_sched *s)
{
    unsigned i;

    for (i = 0; i < LD_SCHED_BATCH && s->runq_len != 0; i++) {
        if (s->runq_len > LD_SCHED_PREFETCH)
            sched_prefetch(s, runq_peek(s, LD_SCHED_PREFETCH));
        sched_resume(s, runq_pop(s));
    }
    sched_batch_done(s, i);
}

/* Sleepers due in one tick are queued together, without being touched: each learns
 * it is running when it runs. A block is copied whole, in two pieces where it wraps
 * round the ring, rather than item by item. */
static void sched_on_deadlines(void *const *items, size_t n, void *ctx)
{
    ld_sched *s = ctx;
    size_t at = (s->runq_head + s->runq_len) & (s->runq_cap - 1);
    size_t first = n < s->runq_cap - at ? n : s->runq_cap - at;

    memcpy(s->runq + at, items, first * sizeof *s->runq);
    if (first < n)
        memcpy(s->runq, items + first, (n - first) * sizeof *s->runq);
    s->runq_len += n;
}

/* Runnable threads first; the loop is polled without blocking between batches, and
 * waited on only when nothing is runnable. */
int ld_sched_run(ld_sched *s)
{
    if (s == NULL || s != sched_self)
        return -EPERM;
    if (s->running)
        return -EBUSY;
    s->running = true;
    for (;;) {
        uint64_t now = uv_hrtime();

        ld_deadlines_expire(s->sleepers, now);
        sched_run_batch(s);
        if (s->runq_len != 0) {
            if (now - s->polled_at >= LD_SCHED_POLL_NS) {
                s->polled_at = now;
                uv_run(&s->loop, UV_RUN_NOWAIT);
            }
            continue;
        }
        if (s->live == 0 && !uv_loop_alive(&s->loop))
            break;
        s->in_wait = true;
        uv_run(&s->loop, UV_RUN_ONCE);
        s->in_wait = false;
    }
    s->running = false;
    return 0;
}

/* Copy mode: the one stack the scheduler's threads share, of the depot's size. A
 * ucontext backend keeps pointers into its stacks, so it cannot copy them. */
static int sched_run_stack_map(ld_sched *s)
{
    int rc;

    if (ld_stack_depot_mode(s->stacks.depot) != LD_STACK_COPY)
        return 0;
    if (!ld_stack_mode_supported(LD_STACK_COPY))
        return -ENOTSUP;
    rc = ld_copy_run_map(&s->run, ld_stack_depot_size(s->stacks.depot));
    if (rc == 0)
        s->run_top = (char *)s->run.lo + s->run.size;
    return rc;
}

/* For the overflow handler (gt_overflow.h): what runs on this carrier. It only reads
 * this thread's own scheduler, so a SIGSEGV handler may call it. */
static const ld_stack *sched_running_stack(uint64_t *id)
{
    ld_sched *s = sched_self;

    if (s == NULL || s->current == NULL)
        return NULL;
    *id = s->current->id;
    return s->run.lo != NULL ? &s->run : gt_stack(s->current);
}

/* Its place in the registry first, then the carrier's signal stack, the loop and its
 * async; undone in reverse. */
int ld_sched_create(ld_sched **out, const ld_sched_config *cfg)
{
    ld_sched *s;
    size_t size =
        cfg != NULL && cfg->stack_size != 0 ? cfg->stack_size : LD_GT_STACK_DEFAULT;
    size_t cache =
        cfg != NULL && cfg->stack_cache != 0 ? cfg->stack_cache : LD_SCHED_CACHE_DEFAULT;
    int rc;

    if (out == NULL)
        return -EINVAL;
    if (sched_self != NULL)
        return -EBUSY;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return -ENOMEM;
    rc = sched_register(s);
    if (rc != 0)
        goto fail_free;
    rc = ld_overflow_watch_start(&s->watch, sched_running_stack);
    if (rc != 0)
        goto fail_register;
    rc = uv_loop_init(&s->loop);
    if (rc != 0)
        goto fail_watch;
    rc = uv_async_init(&s->loop, &s->wake, sched_on_wake);
    if (rc != 0)
        goto fail_loop;
    s->wake.data = s;
    uv_unref((uv_handle_t *)&s->wake);
    rc = -pthread_mutex_init(&s->remote_lock, NULL);
    if (rc != 0)
        goto fail_async;
    rc = ld_stack_cache_init(&s->stacks, cfg != NULL ? cfg->depot : NULL, size,
                             cfg != NULL ? cfg->mode : LD_STACK_OWN, cache);
    if (rc != 0)
        goto fail_lock;
    rc = sched_run_stack_map(s);
    if (rc != 0)
        goto fail_cache;
    rc = ld_deadlines_open_n(&s->sleepers, &s->loop, sched_on_deadlines, s);
    if (rc != 0)
        goto fail_run;
    ld_ctx_init_self(&s->ctx);
    s->trim_after = cfg != NULL ? cfg->trim_after : 0;
    s->page = ld_stack_page();
    sched_self = s;
    *out = s;
    return 0;

fail_run:
    if (s->run.lo != NULL)
        ld_copy_run_unmap(&s->run);
fail_cache:
    ld_stack_cache_fini(&s->stacks);
fail_lock:
    pthread_mutex_destroy(&s->remote_lock);
fail_async:
    uv_close((uv_handle_t *)&s->wake, NULL);
    uv_run(&s->loop, UV_RUN_NOWAIT);
fail_loop:
    uv_loop_close(&s->loop);
fail_watch:
    ld_overflow_watch_stop(&s->watch);
fail_register:
    sched_unregister(s);
fail_free:
    free(s);
    return rc;
}

/* Taking the remote lock once waits out any ld_gt_unpark still inside sched_post. One
 * non-blocking turn of the loop runs the close callbacks of the async and the
 * sleepers' handles. */
void ld_sched_destroy(ld_sched *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->remote_lock);
    pthread_mutex_unlock(&s->remote_lock);
    uv_close((uv_handle_t *)&s->wake, NULL);
    ld_deadlines_close(s->sleepers);
    uv_run(&s->loop, UV_RUN_NOWAIT);
    uv_loop_close(&s->loop);
    free(s->runq);
    pthread_mutex_destroy(&s->remote_lock);
    if (s->run.lo != NULL)
        ld_copy_run_unmap(&s->run);
    ld_stack_cache_fini(&s->stacks);
    ld_overflow_watch_stop(&s->watch);
    sched_unregister(s);
    if (sched_self == s)
        sched_self = NULL;
    free(s);
}

void ld_sched_observe(const ld_sched *s, uint64_t *running, uint64_t *switches)
{
    *running = atomic_load_explicit(&s->observed_id, memory_order_relaxed);
    *switches = atomic_load_explicit(&s->switches, memory_order_relaxed);
}

uv_loop_t *ld_sched_loop(ld_sched *s)
{
    return &s->loop;
}

/* What a spawn may be refused for before it takes anything. */
static int sched_spawn_check(const ld_sched *s, ld_gt_fn fn)
{
    if (s == NULL || fn == NULL)
        return -EINVAL;
    return s != sched_self ? -EPERM : 0;
}

/* What every thread of one spawn shares, worked out once for a batch and kept in
 * locals, which the writes to each new thread cannot be taken to change: the function
 * and its argument, the next id, and in copy mode the run stack (run_lo NULL with own
 * stacks). The spawner's control words are a local apart, read once a spawn: the
 * instruction that reads them writes memory, which would keep this struct there. */
typedef struct gt_spawn {
    ld_sched *sched;
    ld_gt_fn fn;
    void *arg;
    uint32_t id;
    void *run_lo;
    char *run_top;
} gt_spawn;

static inline __attribute__((always_inline)) void
sched_spawn_begin(gt_spawn *sp, ld_ctx_fp *fp, ld_sched *s, ld_gt_fn fn, void *arg,
                  size_t n)
{
    ld_ctx_fp_save(fp);
    sp->sched = s;
    sp->fn = fn;
    sp->arg = arg;
    sp->id = sched_take_ids(s, n);
    sp->run_lo = s->run.lo;
    sp->run_top = s->run_top;
}

/* A new thread in the header of st, runnable, for the caller to queue, to count live
 * and, in copy mode, to count resident. It lives in its stack's header, so a spawn
 * allocates nothing else. Inlined into both spawns, the batch's loop above all. */
static inline __attribute__((always_inline)) ld_gt *
sched_spawn_one(gt_spawn *sp, const ld_ctx_fp *fp, ld_slot *h, bool joinable)
{
    ld_gt *g = (ld_gt *)h;

    g->fn = sp->fn;
    g->arg = sp->arg;
    g->joiner = NULL;
    atomic_init(&g->remote, 0u);
    g->id = sp->id++;
    g->sched = sp->sched->index;
    g->state = GT_READY;
    g->flags = joinable ? GT_JOINABLE : 0;
    if (sp->run_lo != NULL) {
        ld_ctx_make(&g->ctx, sp->run_lo, sp->run_top, fp);
    } else {
        ld_ctx_make(&g->ctx, gt_stack(g)->lo, g, fp);
        sched_count_spawn_own(sp->sched, g);
    }
    return g;
}

/* The end of a spawn of n: live, and in copy mode resident, the batch at once. */
static void sched_spawned(ld_sched *s, size_t n)
{
    if (s->run.lo != NULL)
        s->stats.bytes_resident += (uint64_t)n * LD_STACK_CHUNK_ROOM;
    sched_live_add(s, n);
    sched_end_wait(s);
}

/* A new thread is runnable at once. It takes a stack, from the cache when it can. */
int ld_gt_spawn(ld_sched *s, ld_gt_fn fn, void *arg, ld_gt **out)
{
    gt_spawn sp;
    ld_ctx_fp fp;
    ld_slot *h;
    ld_gt *g;
    int rc = sched_spawn_check(s, fn);

    if (rc != 0)
        return rc;
    if (runq_reserve(s, 1) != 0)
        return -ENOMEM;
    h = ld_stack_get(&s->stacks);
    if (h == NULL)
        return -ENOMEM;
    sched_spawn_begin(&sp, &fp, s, fn, arg, 1);
    g = sched_spawn_one(&sp, &fp, h, out != NULL);
    runq_push(s, g);
    sched_spawned(s, 1);
    if (out != NULL)
        *out = g;
    return 0;
}

/* The ring grows once for the whole batch, and the batch is appended to it from
 * locals, as the spawn's shared values are kept. A stack that cannot be had ends the
 * batch. */
int ld_gt_spawn_n(ld_sched *s, ld_gt_fn fn, void *arg, size_t n, size_t *spawned)
{
    gt_spawn sp;
    ld_ctx_fp fp;
    ld_gt **ring;
    size_t i, tail, mask;
    int rc = sched_spawn_check(s, fn);

    *spawned = 0;
    if (rc != 0)
        return rc;
    if (runq_reserve(s, n) != 0)
        return -ENOMEM;
    sched_spawn_begin(&sp, &fp, s, fn, arg, n);
    ring = s->runq;
    mask = s->runq_cap - 1;
    tail = s->runq_head + s->runq_len;
    for (i = 0; i < n; i++) {
        ld_slot *h = ld_stack_get(&s->stacks);

        if (h == NULL) {
            rc = -ENOMEM;
            break;
        }
        ring[(tail + i) & mask] = sched_spawn_one(&sp, &fp, h, false);
    }
    s->runq_len += i;
    sched_spawned(s, i);
    *spawned = i;
    return rc;
}

ld_sched *ld_sched_self(void)
{
    return sched_self;
}

ld_gt *ld_gt_self(void)
{
    return sched_self != NULL ? sched_self->current : NULL;
}

uint64_t ld_gt_id(const ld_gt *g)
{
    return g->id;
}

/* The next runnable thread, when a yield may switch to it directly: it has started
 * (a first switch must come from the scheduler's own context), the batch has room,
 * it has a stack of its own (in copy mode the scheduler must move the frames), and no
 * trim may be due (it must run off the yielding thread's stack). */
static ld_gt *sched_direct_next(ld_sched *s)
{
    ld_gt *next = runq_peek(s, 0);

    if (next == NULL || !(next->flags & GT_STARTED) || s->direct == 0 ||
        s->run.lo != NULL || s->trim_after != 0)
        return NULL;
    s->direct--;
    return runq_pop(s);
}

/* A yield goes straight to the next runnable thread, one switch instead of two via the
 * scheduler; the scheduler gets the carrier back at the end of each batch. Such a
 * switch-out is counted once the thread is back, from the stack pointer it saved. */
void ld_gt_yield(void)
{
    ld_sched *s = sched_self;
    ld_gt *g = s != NULL ? s->current : NULL;
    ld_gt *next;

    if (g == NULL)
        return;
    next = sched_direct_next(s);
    sched_make_ready(s, g);
    if (next == NULL) {
        gt_block(g);
        return;
    }
    sched_check_own(g);
    sched_enter(s, next);
    ld_ctx_swap(&g->ctx, &next->ctx);
    sched_out_own(s, g); /* a direct switch is own mode's */
}

/* A set of sleepers that could not take a deadline (rc < 0), or ns of 0 (rc 1): the
 * thread yields until its deadline instead, slower, never wrong. Apart from
 * ld_gt_sleep_ns, so that a sleep that parks keeps nothing across its calls. */
static __attribute__((noinline)) void gt_sleep_yielding(int rc, uint64_t ns)
{
    uint64_t deadline = uv_hrtime() + ns;

    do
        ld_gt_yield();
    while (rc < 0 && uv_hrtime() < deadline);
}

/* The deadline is fixed at the scheduler's next look at the clock, after this call: it
 * never fires early, and late by at most the rest of the batch, the same bound its
 * expiry already has. A sleep thus reads no clock of its own. */
void ld_gt_sleep_ns(uint64_t ns)
{
    ld_sched *s = sched_self;
    ld_gt *g = s != NULL ? s->current : NULL;
    int rc;

    if (g == NULL)
        return;
    if (ns > UINT64_MAX / 4)
        ns = UINT64_MAX / 4;
    rc = ld_deadlines_add_after(s->sleepers, g, ns);
    if (rc != 0) {
        gt_sleep_yielding(rc, ns);
        return;
    }
    g->state = GT_SLEEPING;
    gt_block(g);
}

/* Joining waits on the joined thread's carrier, so both must share it. A thread that
 * has already returned may also be joined from its scheduler's thread outside any
 * green thread, since that needs no waiting. */
int ld_gt_join(ld_gt *g)
{
    ld_sched *s = sched_self;
    ld_gt *self;

    if (s == NULL)
        return -EPERM;
    self = s->current;
    if (g == NULL || g == self || g->sched != s->index || !(g->flags & GT_JOINABLE) ||
        g->joiner != NULL)
        return -EINVAL;
    if (g->state != GT_DONE) {
        if (self == NULL)
            return -EPERM;
        g->joiner = self;
        self->state = GT_JOINING;
        gt_block(self);
    }
    gt_free(s, g);
    return 0;
}

/* Park and suspend are one wait on two channels: a wake-up that came first (its
 * pending flag) is taken at once, else the thread blocks in `state` until it comes. */
static void gt_wait(ld_gt *g, unsigned pending, unsigned char state)
{
    if (g->flags & pending) {
        g->flags &= (unsigned char)~pending;
        return;
    }
    g->state = state;
    gt_block(g);
}

/* A wake-up on either channel: delivered at once on g's own carrier, posted there
 * from any other thread. */
static void gt_wake(ld_gt *g, unsigned wake)
{
    ld_sched *s = sched_self;

    if (s != NULL && g->sched == s->index)
        gt_deliver(s, g, wake);
    else
        sched_post(g, wake);
}

void ld_gt_park(void)
{
    ld_gt *g = ld_gt_self();

    if (g != NULL)
        gt_wait(g, GT_PERMIT, GT_PARKED);
}

void ld_gt_unpark(ld_gt *g)
{
    if (g != NULL)
        gt_wake(g, GT_WAKE_UNPARK);
}

void ld_gt_suspend(void)
{
    ld_gt *g = ld_gt_self();

    if (g != NULL)
        gt_wait(g, GT_PENDING, GT_SUSPENDED);
}

void ld_gt_resume(ld_gt *g)
{
    gt_wake(g, GT_WAKE_RESUME);
}

ld_gt **ld_gt_wait_next(ld_gt *g)
{
    return &g->wait_next;
}
