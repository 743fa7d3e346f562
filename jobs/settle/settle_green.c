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
 *
 * Under --io http a check is a request from the carrier's set of kept-alive
 * connections (http_client.h), parking the green thread until its answer, except
 * inside green-pinned's monitor: there it is a blocking socket call on the carrier's
 * one connection for that, which blocks the carrier as the sleep did. The last trade
 * of a carrier closes its connections, before its scheduler goes.
 */
#include "carriers.h"
#include "gt_stats.h"
#include "settle.h"
#include "settle_db.h"
#include "settle_http.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

enum monitor_mode { MONITOR_NONE, MONITOR_PINS, MONITOR_PARKS };

typedef struct green_spawner green_spawner;

typedef struct green_run {
    const ld_job_input *in;
    enum monitor_mode mode;
    pthread_mutex_t *os_monitors; /* MONITOR_PINS: one per trade */
    ld_gt_mutex **gt_monitors;    /* MONITOR_PARKS: one per trade that takes it */
    green_spawner *carriers;      /* one per carrier */
    unsigned ncarriers;
    double scale; /* the prepared latency factor, one load away for wait_trade */
    bool waits;   /* every call outside a monitor is a wait: no HTTP, no database */
} green_run;

/* The run whose trades this carrier's thread settles, set before it spawns any. A
 * trade's green thread is handed only its index: a pointer to a struct of its own would
 * cost every trade a line of memory that the trade reads once. */
static _Thread_local green_run *carrier_run;

/* What a carrier's trades share: its spawner, and under --io http its connections. */
struct green_spawner {
    green_run *run;
    ld_sched *sched;
    unsigned carrier;
    size_t left;            /* of its trades, those not yet finished */
    ld_http_conns *conns;   /* --io http: the carrier's connections */
    ld_http_conn *pinned;   /* and green-pinned's blocking one */
    ld_settle_db_pipes *db; /* --db postgres: the carrier's pipelined connections */
    uint64_t spills; /* copy mode: freezes past a chunk's room, at its last trade */
    int rc;          /* the first error of a spawn or a trade */
};

/* One call of trade i on carrier cr, plan being its plan: its outcome (1: failed), or
 * an error. It blocks the carrier where `blocks` says, and parks the green thread
 * otherwise. Inlined, so that a parked trade has no frame of it. */
static inline __attribute__((always_inline)) int
green_call(green_spawner *cr, size_t i, const ld_settle_plan *plan, int c, bool blocks)
{
    const ld_job_input *in = cr->run->in;
    const ld_settle_http *h = ld_settle_http_of(in);
    if (h && ld_settle_is_check(c))
        return blocks ? ld_settle_http_blocking(cr->pinned, h, &in->trades[i], c)
                      : ld_settle_http_green(cr->conns, h, &in->trades[i], c);
    int64_t ns = ld_settle_latency(in, plan, c);
    if (blocks)
        ld_settle_block_ns(ns);
    else
        ld_gt_sleep_ns((uint64_t)ns);
    return c == plan->failed_check;
}

/* The monitored section: both validation calls under the trade's own monitor, blocking
 * the carrier under green-pinned's; 0, or the error that cut it short. */
static int validate_in_monitor(green_spawner *cr, size_t i, const ld_settle_plan *plan,
                               int *failed)
{
    green_run *r = cr->run;
    bool pins = r->mode == MONITOR_PINS;
    int outcome = 0;
    if (pins)
        pthread_mutex_lock(&r->os_monitors[i]);
    else
        ld_gt_mutex_lock(r->gt_monitors[i]);
    for (int c = LD_CALL_COUNTERPARTY; c <= LD_CALL_BUYING_POWER && outcome >= 0; c++) {
        outcome = green_call(cr, i, plan, c, pins);
        ld_settle_note(failed, c, outcome);
    }
    if (pins)
        pthread_mutex_unlock(&r->os_monitors[i]);
    else
        ld_gt_mutex_unlock(r->gt_monitors[i]);
    return outcome < 0 ? outcome : 0;
}

/* A trade of carrier cr is over; its last closes the carrier's connections, and counts
 * the freezes whose frames spilled past their chunk's room since the carrier began. */
static void trade_over(green_spawner *cr, int rc)
{
    if (rc < 0 && cr->rc == 0)
        cr->rc = rc;
    if (--cr->left > 0)
        return;
    cr->spills = ld_sched_stack_spills(cr->sched);
    ld_http_conns_close(cr->conns);
    ld_http_conn_close(cr->pinned);
    ld_settle_db_pipes_close(cr->db);
    cr->conns = NULL;
    cr->pinned = NULL;
    cr->db = NULL;
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

/* Whether the trade of this plan takes its monitor in this run. */
static bool takes_monitor(const green_run *r, const ld_settle_plan *plan)
{
    return r->mode != MONITOR_NONE && plan->pinned;
}

/* Trade index's plan. Under the tests' cfg->test_overflow, trade 0 overflows its stack
 * first. */
static inline __attribute__((always_inline)) const ld_settle_plan *
trade_plan(green_run *r, size_t index)
{
    if (index == 0 && r->in->cfg->test_overflow)
        overflow_stack(NULL, 0);
    return ld_settle_plan_of(r->in, index);
}

/* Trade index has made its calls: its result, unless rc says one failed. */
static void trade_done(green_run *r, size_t index, int failed, int rc)
{
    if (rc >= 0)
        ld_settle_finish(r->in, index, failed);
    trade_over(&r->carriers[index % r->ncarriers], rc);
}

/* A trade whose calls are all waits, as a green thread. What it reads of its plan is
 * kept in two registers, its calls' draws a byte each in one word: with a million
 * trades the plans lie far apart in memory, while a thread's frames come back with it
 * at every switch. Its frame is then the least a trade's can be, so that a parked
 * trade's frames fit a chunk's two-line room (gt.h); settle.floor holds it there. */
static void wait_trade(void *arg)
{
    size_t index = (uintptr_t)arg;
    const ld_settle_plan *plan = trade_plan(carrier_run, index);
    int failed = (int)plan->failed_check; /* each call made lasts: it is waited out */
    uint64_t draws = 0;
    for (int c = LD_SETTLE_CALLS; c-- > 0;)
        draws = draws << 8 | plan->ms[c];
    for (; draws; draws >>= 8)
        if (draws & 0xff)
            ld_gt_sleep_ns((uint64_t)ld_settle_ms_ns(draws & 0xff, carrier_run->scale));
    trade_done(carrier_run, index, failed, 0);
}

/* Any other trade, as a green thread: the five calls in order, then its result. */
static void settle_trade(void *arg)
{
    green_run *r = carrier_run;
    size_t index = (uintptr_t)arg;
    green_spawner *cr = &r->carriers[index % r->ncarriers];
    const ld_settle_plan plan = *trade_plan(r, index); /* for the reason above */
    bool monitored = takes_monitor(r, &plan);
    int failed = -1, rc = 0;
    for (int c = 0; c < LD_SETTLE_CALLS && rc >= 0; c++) {
        if (monitored && ld_settle_in_monitor(c)) {
            rc = validate_in_monitor(cr, index, &plan, &failed);
            c = LD_CALL_BUYING_POWER;
        } else if (cr->db && ld_settle_is_db(c)) {
            rc = ld_settle_db_green(cr->db, ld_settle_db_of(r->in), &r->in->trades[index],
                                    c, failed);
        } else if (plan.ms[c] != 0) {
            rc = green_call(cr, index, &plan, c, false);
            ld_settle_note(&failed, c, rc);
        }
    }
    trade_done(r, index, failed, rc);
}

/* How trade i runs: as a wait_trade unless a call is more than a wait, or the trade
 * takes the monitor. */
static ld_gt_fn trade_fn(const green_run *r, size_t i)
{
    bool monitored = takes_monitor(r, ld_settle_plan_of(r->in, i));
    return r->waits && !monitored ? wait_trade : settle_trade;
}

/* As a green thread, the way an executor's submit loop starts virtual threads: carrier
 * c spawns the trades c, c + N, c + 2N, ... so each carrier gets a fair share, and
 * yields after every ld_carriers_spawn_batch of them. */
static void spawn_trades(void *arg)
{
    green_spawner *sp = arg;
    green_run *r = sp->run;
    size_t every = ld_carriers_spawn_batch(r->in->cfg), batch = 0, i = sp->carrier;
    for (; i < r->in->n; i += r->ncarriers) {
        int rc = ld_gt_spawn(sp->sched, trade_fn(r, i), (void *)(uintptr_t)i, NULL);
        if (rc != 0) {
            sp->rc = rc;
            break;
        }
        if (++batch % every == 0)
            ld_gt_yield();
    }
    for (; i < r->in->n; i += r->ncarriers) /* never spawned: over all the same */
        trade_over(sp, 0);
}

/* Carrier c's trades, and under --io http its connections, made on its own thread. */
static int spawn_share(unsigned c, ld_sched *s, void *ctx)
{
    green_run *r = ctx;
    green_spawner *sp = &r->carriers[c];
    const ld_settle_http *h = ld_settle_http_of(r->in);
    const struct sockaddr *addr = h ? (const struct sockaddr *)&h->addr : NULL;
    *sp = (green_spawner){.run = r, .sched = s, .carrier = c};
    carrier_run = r;
    ld_sched_stack_stats_reset(s); /* kept carriers count afresh for each run */
    for (size_t i = c; i < r->in->n; i += r->ncarriers)
        sp->left++;
    int rc =
        h && sp->left ? ld_http_conns_open(&sp->conns, addr, h->host, h->timeout_ns) : 0;
    if (rc == 0 && h && sp->left && r->mode == MONITOR_PINS)
        rc = ld_http_conn_open(&sp->pinned, addr, h->host, h->timeout_ns);
    if (rc == 0 && sp->left && ld_settle_db_of(r->in))
        rc = ld_settle_db_pipes_open(&sp->db, ld_settle_db_of(r->in), ld_sched_loop(s));
    if (rc == 0 && sp->left)
        rc = ld_gt_spawn(s, spawn_trades, sp, NULL);
    if (rc != 0) {
        ld_http_conns_close(sp->conns);
        ld_http_conn_close(sp->pinned);
        ld_settle_db_pipes_close(sp->db);
        sp->conns = NULL;
        sp->pinned = NULL;
        sp->db = NULL;
    }
    return rc;
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
    green_run run = {.in = in,
                     .mode = mode,
                     .ncarriers = ld_carriers_count(in->cfg),
                     .scale = ((const ld_settle_prepared *)in->prepared)->scale,
                     .waits = !ld_settle_http_of(in) && !ld_settle_db_of(in)};
    int rc = make_monitors(&run);
    run.carriers = calloc(run.ncarriers, sizeof *run.carriers);
    if (rc == 0 && !run.carriers)
        rc = -ENOMEM;
    if (rc == 0)
        rc = ld_carriers_run(in->cfg, spawn_share, &run);
    uint64_t spills = 0;
    for (unsigned c = 0; rc == 0 && c < run.ncarriers; c++) {
        rc = run.carriers[c].rc;
        spills += run.carriers[c].spills;
    }
    if (rc == 0 && in->figures && in->cfg->stack_mode == LD_STACK_COPY)
        ld_figure_add(in->figures, "stack_spills", (double)spills, "freezes");
    free(run.carriers);
    free_monitors(&run);
    return ld_settle_end(in, rc);
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
