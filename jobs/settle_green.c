/* settle_green.c: one green thread per trade, with or without a monitor around the
 * validation calls.
 *
 * green          every call parks the green thread on a libuv timer.
 * green-pinned   trades with pin_draw < --pin-fraction hold their trade's monitor, an OS
 *                mutex, across the validation calls, and sleep inside it by blocking
 *                their carrier: a virtual thread in `synchronized` before JDK 24.
 * green-monitor  the same trades hold the same monitor, but it is a green-thread lock
 *                and the calls inside it park: JEP 491's fix.
 *
 * The monitor belongs to the trade record, so it is a real shared lock that no
 * compiler can elide; each trade takes only its own, so there is no contention and
 * any slowdown comes from blocking the carrier alone.
 */
#include "carriers.h"
#include "settle.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

enum monitor_mode { MONITOR_NONE, MONITOR_PINS, MONITOR_PARKS };

typedef struct green_run {
    const ld_job_input *in;
    enum monitor_mode mode;
    pthread_mutex_t *os_monitors; /* MONITOR_PINS: one per trade */
    ld_gt_mutex **gt_monitors;    /* MONITOR_PARKS: one per trade that takes it */
} green_run;

typedef struct green_task {
    green_run *run;
    size_t index;
} green_task;

/* The monitored section: both validation calls under the trade's own monitor. */
static void validate_in_monitor(green_run *r, size_t i, const ld_settle_plan *plan)
{
    if (r->mode == MONITOR_PINS) {
        pthread_mutex_lock(&r->os_monitors[i]);
        ld_settle_block_ns(plan->latency_ns[LD_CALL_COUNTERPARTY]);
        ld_settle_block_ns(plan->latency_ns[LD_CALL_BUYING_POWER]);
        pthread_mutex_unlock(&r->os_monitors[i]);
        return;
    }
    ld_gt_mutex_lock(r->gt_monitors[i]);
    ld_gt_sleep_ns((uint64_t)plan->latency_ns[LD_CALL_COUNTERPARTY]);
    ld_gt_sleep_ns((uint64_t)plan->latency_ns[LD_CALL_BUYING_POWER]);
    ld_gt_mutex_unlock(r->gt_monitors[i]);
}

/* Tests only (cfg->test_overflow): a call chain deeper than any stack. Each frame's
 * buffer escapes into the next call, so no compiler can fold the frames into a loop;
 * the depth limit is never reached. */
static __attribute__((noinline)) int overflow_stack(volatile char *prev, unsigned depth)
{
    volatile char frame[512];
    frame[0] = (char)depth;
    frame[sizeof frame - 1] = prev ? prev[0] : 0;
    if (depth == UINT_MAX)
        return frame[1];
    return overflow_stack(frame, depth + 1) + frame[sizeof frame - 1];
}

/* One trade, as a green thread: the five calls in order, then its result. The plan is
 * copied onto the stack first: with a million trades the plans are far apart in
 * memory, while the thread's own frames come back with it at every switch. */
static void settle_trade(void *arg)
{
    const green_task *t = arg;
    green_run *r = t->run;
    size_t index = t->index;
    if (index == 0 && r->in->cfg->test_overflow)
        overflow_stack(NULL, 0);
    const ld_settle_plan plan = ((const ld_settle_plan *)r->in->prepared)[index];
    int monitored = r->mode != MONITOR_NONE && ld_settle_pinned(r->in, index);
    for (int c = 0; c < LD_SETTLE_CALLS; c++) {
        if (monitored && ld_settle_in_monitor(c)) {
            validate_in_monitor(r, index, &plan);
            c = LD_CALL_BUYING_POWER;
        } else if (plan.latency_ns[c] > 0) {
            ld_gt_sleep_ns((uint64_t)plan.latency_ns[c]);
        }
    }
    ld_settle_finish(r->in, index);
}

typedef struct green_spawner green_spawner;

typedef struct green_spawn {
    green_run *run;
    green_task *tasks;
    green_spawner *spawners; /* one per carrier */
    unsigned ncarriers;
} green_spawn;

struct green_spawner {
    green_spawn *spawn;
    ld_sched *sched;
    unsigned carrier;
    int rc; /* of its first failed spawn, after which it stops */
};

/* Trades started between two yields of the spawner: each starts while what its spawn
 * wrote is still in cache, and the trades already sleeping are woken on time. */
#define SPAWN_BATCH 64

/* As a green thread, the way an executor's submit loop starts virtual threads: carrier
 * c spawns the trades c, c + N, c + 2N, ... so each carrier gets a fair share, and
 * lets them run a batch at a time. */
static void spawn_trades(void *arg)
{
    green_spawner *sp = arg;
    green_spawn *g = sp->spawn;
    size_t batch = 0;
    for (size_t i = sp->carrier; i < g->run->in->n && sp->rc == 0; i += g->ncarriers) {
        g->tasks[i] = (green_task){.run = g->run, .index = i};
        sp->rc = ld_gt_spawn(sp->sched, settle_trade, &g->tasks[i], NULL);
        if (++batch % SPAWN_BATCH == 0)
            ld_gt_yield();
    }
}

static int spawn_share(unsigned c, ld_sched *s, void *ctx)
{
    green_spawn *g = ctx;
    g->spawners[c] = (green_spawner){.spawn = g, .sched = s, .carrier = c};
    return ld_gt_spawn(s, spawn_trades, &g->spawners[c], NULL);
}

/* The monitors exist before the clock matters to them: made here, freed after. */
static int make_monitors(green_run *r)
{
    size_t n = r->in->n;
    if (r->mode == MONITOR_PINS) {
        r->os_monitors = malloc((n ? n : 1) * sizeof *r->os_monitors);
        if (!r->os_monitors)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++)
            pthread_mutex_init(&r->os_monitors[i], NULL);
    } else if (r->mode == MONITOR_PARKS) {
        r->gt_monitors = calloc(n ? n : 1, sizeof *r->gt_monitors);
        if (!r->gt_monitors)
            return -ENOMEM;
        for (size_t i = 0; i < n; i++)
            if (ld_settle_pinned(r->in, i) && ld_gt_mutex_create(&r->gt_monitors[i]))
                return -ENOMEM;
    }
    return 0;
}

static void free_monitors(green_run *r)
{
    for (size_t i = 0; r->os_monitors && i < r->in->n; i++)
        pthread_mutex_destroy(&r->os_monitors[i]);
    for (size_t i = 0; r->gt_monitors && i < r->in->n; i++)
        if (r->gt_monitors[i])
            ld_gt_mutex_destroy(r->gt_monitors[i]);
    free(r->os_monitors);
    free(r->gt_monitors);
}

static int settle_green_mode(const ld_job_input *in, enum monitor_mode mode)
{
    green_run run = {.in = in, .mode = mode};
    green_spawn g = {.run = &run, .ncarriers = ld_carriers_count(in->cfg)};
    int rc = make_monitors(&run);
    g.tasks = malloc((in->n ? in->n : 1) * sizeof *g.tasks);
    g.spawners = calloc(g.ncarriers, sizeof *g.spawners);
    if (rc == 0 && (!g.tasks || !g.spawners))
        rc = -ENOMEM;
    if (rc == 0)
        rc = ld_carriers_run(in->cfg, spawn_share, &g);
    for (unsigned c = 0; rc == 0 && c < g.ncarriers; c++)
        rc = g.spawners[c].rc;
    free(g.spawners);
    free(g.tasks);
    free_monitors(&run);
    return rc;
}

int ld_settle_green(const ld_job_input *in)
{
    return settle_green_mode(in, MONITOR_NONE);
}

int ld_settle_green_pinned(const ld_job_input *in)
{
    return settle_green_mode(in, MONITOR_PINS);
}

int ld_settle_green_monitor(const ld_job_input *in)
{
    return settle_green_mode(in, MONITOR_PARKS);
}
