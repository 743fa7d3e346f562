/* gt_sched.c: the scheduler of one carrier thread: its run queue, spawn and join, and
 * the blocking calls (yield, sleep, park, suspend) that park a green thread on the
 * carrier's uv_loop until a callback makes it runnable again.
 *
 * Every switch goes through the scheduler's own context: a green thread that blocks
 * swaps to the scheduler, which resumes the next runnable one. Each carrier's state is
 * touched only by that carrier, except the remote queue, where other OS threads post
 * wake-ups under a mutex and a uv_async tells the carrier to collect them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "gt.h"
#include "gt_sched.h"
#include "gt_stack.h"
#include "gt_switch.h"

/* Resumes between two polls of the loop while threads are runnable: enough to amortise
 * the poll's system call, few enough that timers and I/O are not held up for long. */
#define LD_SCHED_BATCH 128
#define LD_SCHED_CACHE_DEFAULT 1024u

enum ld_gt_state {
    GT_READY,     /* in the run queue */
    GT_RUNNING,   /* on the carrier now */
    GT_PARKED,    /* in ld_gt_park, until an unpark */
    GT_SUSPENDED, /* in ld_gt_suspend, until a resume */
    GT_SLEEPING,  /* in ld_gt_sleep_ns, until its timer fires */
    GT_JOINING,   /* in ld_gt_join, until the joined thread returns */
    GT_DONE       /* fn returned; joinable threads wait here to be joined */
};

/* Wake-ups posted from other OS threads, delivered later on the owner's carrier. */
enum { GT_WAKE_UNPARK = 1u, GT_WAKE_RESUME = 2u };

struct ld_gt {
    ld_ctx ctx;
    ld_sched *sched;
    ld_gt *next;        /* run queue link */
    ld_gt *remote_next; /* remote queue link, under sched->remote_lock */
    ld_gt *joiner;
    ld_gt_fn fn;
    void *arg;
    uint64_t id;
    ld_stack stack;
    _Atomic unsigned remote_wake; /* GT_WAKE_* posted and not yet delivered */
    unsigned char state;          /* enum ld_gt_state */
    bool joinable;
    bool permit;         /* an unpark came before its park */
    bool resume_pending; /* a resume came before its suspend */
    bool timer_open;     /* timer initialised, so it must be closed before the free */
    uv_timer_t timer;    /* what ld_gt_sleep_ns parks on */
};

struct ld_sched {
    ld_ctx ctx; /* the carrier's own context, where ld_sched_run runs */
    ld_gt *current;
    ld_gt *runq_head;
    ld_gt *runq_tail;
    size_t live; /* spawned threads whose fn has not returned */
    bool running;
    ld_stack_cache stacks;
    uv_loop_t loop;
    uv_async_t wake; /* referenced exactly while live > 0 */
    pthread_mutex_t remote_lock;
    ld_gt *remote_head;
    ld_gt *remote_tail;
    ld_stack_watch watch;
    /* For watchdogs on other threads: who runs now, and how many switches so far.
     * Written by this carrier alone, so plain relaxed stores suffice. */
    _Atomic uint64_t observed_id;
    _Atomic uint64_t switches;
};

/* The scheduler of this carrier thread: the runtime's only per-thread state. */
static _Thread_local ld_sched *sched_self;

/* Ids are unique in the process, as gt.h promises, so they come from one counter. */
static _Atomic uint64_t gt_next_id = 1;

/* The run queue is FIFO: a thread that yields runs again after every other runnable
 * one, however often the loop is polled in between. */
static void runq_push(ld_sched *s, ld_gt *g)
{
    g->next = NULL;
    if (s->runq_tail != NULL)
        s->runq_tail->next = g;
    else
        s->runq_head = g;
    s->runq_tail = g;
}

static ld_gt *runq_pop(ld_sched *s)
{
    ld_gt *g = s->runq_head;

    s->runq_head = g->next;
    if (s->runq_head == NULL)
        s->runq_tail = NULL;
    return g;
}

static void gt_make_ready(ld_gt *g)
{
    g->state = GT_READY;
    runq_push(g->sched, g);
}

/* While a green thread lives the async keeps the loop alive, so a carrier whose
 * threads are all parked waits in the loop for a remote wake-up; once none is left
 * it must not, or ld_sched_run would never return. */
static void sched_live_inc(ld_sched *s)
{
    if (s->live++ == 0)
        uv_ref((uv_handle_t *)&s->wake);
}

static void sched_live_dec(ld_sched *s)
{
    if (--s->live == 0)
        uv_unref((uv_handle_t *)&s->wake);
}

/* Leave the running green thread for the scheduler; returns once it is resumed. */
static void gt_block(ld_gt *g)
{
    ld_ctx_swap(&g->ctx, &g->sched->ctx);
}

/* A wake-up arriving on the owner's carrier. One that finds its thread not waiting for
 * it is kept, so a wake-up that beats its wait is never lost. */
static void gt_deliver(ld_gt *g, unsigned wake)
{
    if (wake & GT_WAKE_UNPARK) {
        if (g->state == GT_PARKED)
            gt_make_ready(g);
        else
            g->permit = true;
    }
    if (wake & GT_WAKE_RESUME) {
        if (g->state == GT_SUSPENDED)
            gt_make_ready(g);
        else
            g->resume_pending = true;
    }
}

/* Post a wake-up from another OS thread. The async is sent while the lock is held: the
 * owner takes the lock to collect the wake-up and to tear the scheduler down, so the
 * scheduler outlives this call. Two posts before a collection merge into one entry. */
static void sched_post(ld_gt *g, unsigned wake)
{
    ld_sched *s = g->sched;
    unsigned old;

    pthread_mutex_lock(&s->remote_lock);
    old = atomic_load_explicit(&g->remote_wake, memory_order_relaxed);
    if (old == 0) {
        g->remote_next = NULL;
        if (s->remote_tail != NULL)
            s->remote_tail->remote_next = g;
        else
            s->remote_head = g;
        s->remote_tail = g;
    }
    atomic_store_explicit(&g->remote_wake, old | wake, memory_order_relaxed);
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
        next = g->remote_next;
        gt_deliver(g, atomic_exchange_explicit(&g->remote_wake, 0, memory_order_relaxed));
    }
    s->remote_head = NULL;
    s->remote_tail = NULL;
    pthread_mutex_unlock(&s->remote_lock);
}

/* A thread that returns with a wake-up still queued (an unpark it never parked for)
 * leaves the remote queue before it is freed. */
static void sched_forget_remote(ld_sched *s, ld_gt *g)
{
    ld_gt **link, *prev = NULL;

    if (atomic_load_explicit(&g->remote_wake, memory_order_acquire) == 0)
        return;
    pthread_mutex_lock(&s->remote_lock);
    for (link = &s->remote_head; *link != NULL && *link != g;
         link = &(*link)->remote_next)
        prev = *link;
    if (*link == g) {
        *link = g->remote_next;
        if (s->remote_tail == g)
            s->remote_tail = prev;
    }
    atomic_store_explicit(&g->remote_wake, 0, memory_order_relaxed);
    pthread_mutex_unlock(&s->remote_lock);
}

static void gt_on_timer_closed(uv_handle_t *h)
{
    free(h->data);
}

/* The timer is a loop handle, so a thread that ever slept is freed by its close
 * callback, on the loop's next turn. */
static void gt_free(ld_gt *g)
{
    if (g->timer_open)
        uv_close((uv_handle_t *)&g->timer, gt_on_timer_closed);
    else
        free(g);
}

/* After a thread's last switch, on the scheduler's stack: its stack can be reused
 * now, and its struct goes to the joiner, or away if nobody may join it. */
static void gt_finish(ld_sched *s, ld_gt *g)
{
    ld_ctx_release(&g->ctx);
    ld_stack_put(&s->stacks, &g->stack);
    sched_forget_remote(s, g);
    sched_live_dec(s);
    if (!g->joinable)
        gt_free(g);
    else if (g->joiner != NULL)
        gt_make_ready(g->joiner);
}

/* Every green thread starts here, on its own stack, and leaves with a last switch. */
static void gt_entry(void *arg)
{
    ld_gt *g = arg;

    ld_ctx_started(&g->sched->ctx);
    g->fn(g->arg);
    g->state = GT_DONE;
    ld_ctx_leave(&g->ctx, &g->sched->ctx);
}

/* Run g until it blocks or returns. */
static void sched_resume(ld_sched *s, ld_gt *g)
{
    s->current = g;
    g->state = GT_RUNNING;
    uint64_t n = atomic_load_explicit(&s->switches, memory_order_relaxed);
    atomic_store_explicit(&s->switches, n + 1, memory_order_relaxed);
    atomic_store_explicit(&s->observed_id, g->id, memory_order_relaxed);
    ld_ctx_swap(&s->ctx, &g->ctx);
    atomic_store_explicit(&s->observed_id, 0, memory_order_relaxed);
    s->current = NULL;
    if (g->state == GT_DONE)
        gt_finish(s, g);
}

static void sched_run_batch(ld_sched *s)
{
    int i;

    for (i = 0; i < LD_SCHED_BATCH && s->runq_head != NULL; i++)
        sched_resume(s, runq_pop(s));
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
        sched_run_batch(s);
        if (s->runq_head != NULL) {
            uv_run(&s->loop, UV_RUN_NOWAIT);
            continue;
        }
        if (s->live == 0 && !uv_loop_alive(&s->loop))
            break;
        uv_run(&s->loop, UV_RUN_ONCE);
    }
    s->running = false;
    return 0;
}

/* The carrier's signal stack first, then the loop and its async; undone in reverse. */
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
    rc = ld_stack_watch_start(&s->watch);
    if (rc != 0)
        goto fail_free;
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
    ld_stack_cache_init(&s->stacks, size, cache);
    ld_ctx_init_self(&s->ctx);
    sched_self = s;
    *out = s;
    return 0;

fail_async:
    uv_close((uv_handle_t *)&s->wake, NULL);
    uv_run(&s->loop, UV_RUN_NOWAIT);
fail_loop:
    uv_loop_close(&s->loop);
fail_watch:
    ld_stack_watch_stop(&s->watch);
fail_free:
    free(s);
    return rc;
}

/* Taking the remote lock once waits out any ld_gt_unpark still inside sched_post. One
 * non-blocking turn of the loop runs the close callbacks: the async's, and those of
 * the timers of threads joined since the loop last ran. */
void ld_sched_destroy(ld_sched *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->remote_lock);
    pthread_mutex_unlock(&s->remote_lock);
    uv_close((uv_handle_t *)&s->wake, NULL);
    uv_run(&s->loop, UV_RUN_NOWAIT);
    uv_loop_close(&s->loop);
    pthread_mutex_destroy(&s->remote_lock);
    ld_stack_cache_fini(&s->stacks);
    ld_stack_watch_stop(&s->watch);
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

/* A new thread is runnable at once; its stack comes from the cache when it can. */
int ld_gt_spawn(ld_sched *s, ld_gt_fn fn, void *arg, ld_gt **out)
{
    ld_gt *g;
    int rc;

    if (s == NULL || fn == NULL)
        return -EINVAL;
    if (s != sched_self)
        return -EPERM;
    g = malloc(sizeof *g);
    if (g == NULL)
        return -ENOMEM;
    rc = ld_stack_get(&s->stacks, &g->stack);
    if (rc != 0) {
        free(g);
        return rc;
    }
    g->sched = s;
    g->joiner = NULL;
    g->fn = fn;
    g->arg = arg;
    g->id = atomic_fetch_add_explicit(&gt_next_id, 1, memory_order_relaxed);
    atomic_init(&g->remote_wake, 0u);
    g->joinable = out != NULL;
    g->permit = false;
    g->resume_pending = false;
    g->timer_open = false;
    ld_ctx_make(&g->ctx, g->stack.lo, g->stack.size, gt_entry, g);
    sched_live_inc(s);
    gt_make_ready(g);
    if (out != NULL)
        *out = g;
    return 0;
}

ld_gt *ld_gt_self(void)
{
    return sched_self != NULL ? sched_self->current : NULL;
}

uint64_t ld_gt_id(const ld_gt *g)
{
    return g->id;
}

void ld_gt_yield(void)
{
    ld_gt *g = ld_gt_self();

    if (g == NULL)
        return;
    gt_make_ready(g);
    gt_block(g);
}

/* The timer fires once the loop's millisecond clock reaches the deadline rounded up to
 * a whole millisecond, so the sleep never ends early: the loop clock is refreshed (it
 * may be a whole batch old), and the part of this millisecond already gone counts. */
static uint64_t gt_sleep_timeout_ms(uv_loop_t *loop, uint64_t ns)
{
    uint64_t now_ms, due_ms;

    if (ns > UINT64_MAX / 2)
        ns = UINT64_MAX / 2;
    uv_update_time(loop);
    now_ms = uv_now(loop);
    due_ms = (uv_hrtime() + ns + 999999u) / 1000000u;
    return due_ms > now_ms ? due_ms - now_ms : (ns + 999999u) / 1000000u;
}

static void gt_on_timer(uv_timer_t *t)
{
    gt_make_ready(t->data);
}

/* The timer lives in the thread and is opened on its first sleep, so a sleep allocates
 * nothing and a thread that never sleeps never touches the loop. */
void ld_gt_sleep_ns(uint64_t ns)
{
    ld_gt *g = ld_gt_self();
    uv_loop_t *loop;

    if (g == NULL)
        return;
    if (ns == 0) {
        ld_gt_yield();
        return;
    }
    loop = &g->sched->loop;
    if (!g->timer_open) {
        uv_timer_init(loop, &g->timer);
        g->timer.data = g;
        g->timer_open = true;
    }
    uv_timer_start(&g->timer, gt_on_timer, gt_sleep_timeout_ms(loop, ns), 0);
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
    if (g == NULL || g == self || g->sched != s || !g->joinable || g->joiner != NULL)
        return -EINVAL;
    if (g->state != GT_DONE) {
        if (self == NULL)
            return -EPERM;
        g->joiner = self;
        self->state = GT_JOINING;
        gt_block(self);
    }
    gt_free(g);
    return 0;
}

void ld_gt_park(void)
{
    ld_gt *g = ld_gt_self();

    if (g == NULL)
        return;
    if (g->permit) {
        g->permit = false;
        return;
    }
    g->state = GT_PARKED;
    gt_block(g);
}

void ld_gt_unpark(ld_gt *g)
{
    if (g == NULL)
        return;
    if (g->sched == sched_self)
        gt_deliver(g, GT_WAKE_UNPARK);
    else
        sched_post(g, GT_WAKE_UNPARK);
}

void ld_gt_suspend(void)
{
    ld_gt *g = ld_gt_self();

    if (g == NULL)
        return;
    if (g->resume_pending) {
        g->resume_pending = false;
        return;
    }
    g->state = GT_SUSPENDED;
    gt_block(g);
}

void ld_gt_resume(ld_gt *g)
{
    if (g->sched == sched_self)
        gt_deliver(g, GT_WAKE_RESUME);
    else
        sched_post(g, GT_WAKE_RESUME);
}

const ld_stack *ld_sched_running_stack(uint64_t *id)
{
    ld_sched *s = sched_self;

    if (s == NULL || s->current == NULL)
        return NULL;
    *id = s->current->id;
    return &s->current->stack;
}
