/* settle_callbacks.c: stackless settlement, one state machine per trade.
 *
 * A trade is the index of its call in flight. Each call is a deadline in its carrier's
 * set of deadlines (deadlines.h), taken from the clock when the call starts, as a green
 * trade's sleep is: both strategies wait the same deadlines, to the same resolution,
 * where libuv's own timers would round every call up to a whole millisecond. The
 * set's fire callback, on the carrier's uv_loop, starts the trade's next call or
 * finishes it. No stack and no green thread, so this is the floor the green
 * strategies are measured against.
 *
 * Under --io http a check is a request from the carrier's set of kept-alive uv_tcp
 * connections (http_client.h), whose answer callback starts the trade's next call.
 */
#include "carriers.h"
#include "deadlines.h"
#include "settle.h"
#include "settle_db.h"
#include "settle_http.h"

#include <errno.h>
#include <stdlib.h>
#include <uv.h>

typedef struct cb_carrier cb_carrier;

typedef struct cb_trade {
    cb_carrier *carrier;
    size_t index;
    int call;   /* the call now in flight */
    int failed; /* the first check that failed, or -1 */
} cb_trade;

_Static_assert(sizeof(cb_trade) <= LD_SETTLE_SCRATCH, "a trade must fit the scratch");

/* One carrier's trades, the deadlines of their calls, and under --io http its
 * connections. */
struct cb_carrier {
    const ld_job_input *in;
    ld_deadlines *calls;
    ld_http_uv_conns *conns;
    ld_settle_db_pipes *db; /* --db postgres: the carrier's pipelined connections */
    size_t left;            /* trades not yet finished */
    int rc;                 /* the first error */
};

typedef struct cb_run {
    const ld_job_input *in;
    cb_trade *trades;
    cb_carrier *carriers;
    unsigned ncarriers;
} cb_run;

/* A trade is over, settled or given up (rc < 0): the carrier's last one closes the
 * set and the connections, and with nothing left on it the carrier's loop ends. */
static void trade_over(cb_carrier *c, int rc)
{
    if (rc < 0 && c->rc == 0)
        c->rc = rc;
    if (--c->left > 0)
        return;
    ld_deadlines_close(c->calls);
    ld_http_uv_conns_close(c->conns);
    ld_settle_db_pipes_close(c->db);
}

static void check_done(void *arg, int rc, const ld_http_reply *reply);
static void db_done(void *arg, int rc);

/* Start call t->call: a request for a check under --io http, else a deadline. Returns
 * 0 when it is under way, 1 when its deadline has already passed, or an error. */
static int start_call(cb_carrier *c, cb_trade *t, const ld_settle_plan *plan)
{
    const ld_settle_http *h = ld_settle_http_of(c->in);
    if (h && ld_settle_is_check(t->call)) {
        char target[LD_SETTLE_TARGET_MAX];
        ld_settle_http_target(h, &c->in->trades[t->index], t->call, target,
                              sizeof target);
        return ld_http_uv_get(c->conns, target, check_done, t);
    }
    if (c->db && ld_settle_is_db(t->call))
        return ld_settle_db_uv(c->db, ld_settle_db_of(c->in), &c->in->trades[t->index],
                               t->call, t->failed, db_done, t);
    return ld_deadlines_add_after(c->calls, t,
                                  (uint64_t)ld_settle_latency(c->in, plan, t->call));
}

/* Start the next call that is made, or finish the trade when none is left. A call
 * whose deadline has passed by the time it is added is over at once. */
static void next_call(cb_carrier *c, cb_trade *t)
{
    const ld_settle_plan *plan = ld_settle_plan_of(c->in, t->index);

    for (;; t->call++) {
        while (t->call < LD_SETTLE_CALLS && plan->ms[t->call] == 0)
            t->call++;
        if (t->call == LD_SETTLE_CALLS) {
            ld_settle_finish(c->in, t->index, t->failed);
            trade_over(c, 0);
            return;
        }
        int rc = start_call(c, t, plan);
        if (rc == 0)
            return;
        if (rc < 0) {
            trade_over(c, rc);
            return;
        }
        ld_settle_note(&t->failed, t->call, t->call == plan->failed_check);
    }
}

/* The call in flight has taken its latency: its outcome is the plan's. */
static void call_done(void *item, void *ctx)
{
    cb_trade *t = item;
    cb_carrier *c = ctx;

    ld_settle_note(&t->failed, t->call,
                   t->call == ld_settle_plan_of(c->in, t->index)->failed_check);
    t->call++;
    next_call(c, t);
}

/* The check in flight has its answer: its outcome is the clearinghouse's. */
static void check_done(void *arg, int rc, const ld_http_reply *reply)
{
    cb_trade *t = arg;
    int outcome = ld_settle_http_outcome(rc, reply);

    if (outcome < 0) {
        trade_over(t->carrier, outcome);
        return;
    }
    ld_settle_note(&t->failed, t->call, outcome);
    t->call++;
    next_call(t->carrier, t);
}

/* The fetch or update in flight is done: fetch and update fail no check. */
static void db_done(void *arg, int rc)
{
    cb_trade *t = arg;

    if (rc < 0) {
        trade_over(t->carrier, rc);
        return;
    }
    t->call++;
    next_call(t->carrier, t);
}

/* Carrier c starts the trades c, c + N, ... on its loop; the scheduler runs the loop. */
static int start_share(unsigned c, ld_sched *s, void *ctx)
{
    cb_run *r = ctx;
    cb_carrier *me = &r->carriers[c];

    const ld_settle_http *h = ld_settle_http_of(r->in);
    *me = (cb_carrier){.in = r->in};
    for (size_t i = c; i < r->in->n; i += r->ncarriers)
        me->left++;
    if (me->left == 0)
        return 0;
    int rc = ld_deadlines_open(&me->calls, ld_sched_loop(s), call_done, me);
    if (rc == 0 && h)
        rc = ld_http_uv_conns_open(&me->conns, ld_sched_loop(s),
                                   (const struct sockaddr *)&h->addr, h->host,
                                   h->timeout_ns);
    if (rc == 0 && ld_settle_db_of(r->in))
        rc = ld_settle_db_pipes_open(&me->db, ld_settle_db_of(r->in), ld_sched_loop(s));
    if (rc) {
        if (me->calls)
            ld_deadlines_close(me->calls);
        ld_http_uv_conns_close(me->conns);
        return rc;
    }
    for (size_t i = c; i < r->in->n; i += r->ncarriers) {
        r->trades[i] = (cb_trade){.carrier = me, .index = i, .failed = -1};
        next_call(me, &r->trades[i]);
    }
    return 0;
}

int ld_settle_callbacks(const ld_job_input *in)
{
    cb_run r = {.in = in, .ncarriers = ld_carriers_count(in->cfg)};
    r.trades = ld_settle_scratch(in);
    r.carriers = calloc(r.ncarriers, sizeof *r.carriers);
    int rc = r.carriers ? ld_carriers_run(in->cfg, start_share, &r) : -ENOMEM;
    for (unsigned c = 0; rc == 0 && r.carriers && c < r.ncarriers; c++)
        rc = r.carriers[c].rc;
    free(r.carriers);
    return ld_settle_end(in, rc);
}
