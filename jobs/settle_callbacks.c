/* settle_callbacks.c: stackless settlement, one state machine per trade.
 *
 * A trade is the index of its call in flight. Each call is a deadline in its carrier's
 * set of deadlines (deadlines.h), taken from the clock when the call starts, as a green
 * trade's sleep is: both strategies wait the same deadlines, to the same resolution,
 * where libuv's own timers would round every call up to a whole millisecond. The
 * set's fire callback, on the carrier's uv_loop, starts the trade's next call or
 * finishes it. No stack and no green thread, so this is the floor the green
 * strategies are measured against.
 */
#include "carriers.h"
#include "deadlines.h"
#include "settle.h"

#include <errno.h>
#include <stdlib.h>

typedef struct cb_trade {
    size_t index;
    int call; /* the call now in flight */
} cb_trade;

/* One carrier's trades and the deadlines of their calls. */
typedef struct cb_carrier {
    const ld_job_input *in;
    ld_deadlines *calls;
    size_t left; /* trades not yet finished */
    int rc;      /* the first error */
} cb_carrier;

typedef struct cb_run {
    const ld_job_input *in;
    cb_trade *trades;
    cb_carrier *carriers;
    unsigned ncarriers;
} cb_run;

/* A trade is over, settled or given up: the carrier's last one closes the set, and
 * with nothing left on it the carrier's loop ends. */
static void trade_over(cb_carrier *c)
{
    if (--c->left == 0)
        ld_deadlines_close(c->calls);
}

/* Start the next call that is made, or finish the trade when none is left. A call
 * whose deadline has passed by the time it is added is over at once. */
static void next_call(cb_carrier *c, cb_trade *t)
{
    const ld_settle_plan *plan = (const ld_settle_plan *)c->in->prepared + t->index;

    for (;; t->call++) {
        while (t->call < LD_SETTLE_CALLS && plan->latency_ns[t->call] == 0)
            t->call++;
        if (t->call == LD_SETTLE_CALLS) {
            ld_settle_finish(c->in, t->index);
            trade_over(c);
            return;
        }
        int rc = ld_deadlines_add(c->calls, t,
                                  uv_hrtime() + (uint64_t)plan->latency_ns[t->call]);
        if (rc == 0)
            return;
        if (rc < 0) {
            c->rc = c->rc ? c->rc : rc;
            trade_over(c);
            return;
        }
    }
}

/* The call in flight has taken its latency. */
static void call_done(void *item, void *ctx)
{
    cb_trade *t = item;

    t->call++;
    next_call(ctx, t);
}

/* Carrier c starts the trades c, c + N, ... on its loop; the scheduler runs the loop. */
static int start_share(unsigned c, ld_sched *s, void *ctx)
{
    cb_run *r = ctx;
    cb_carrier *me = &r->carriers[c];

    *me = (cb_carrier){.in = r->in};
    for (size_t i = c; i < r->in->n; i += r->ncarriers)
        me->left++;
    if (me->left == 0)
        return 0;
    int rc = ld_deadlines_open(&me->calls, ld_sched_loop(s), call_done, me);
    if (rc)
        return rc;
    for (size_t i = c; i < r->in->n; i += r->ncarriers) {
        r->trades[i] = (cb_trade){.index = i};
        next_call(me, &r->trades[i]);
    }
    return 0;
}

int ld_settle_callbacks(const ld_job_input *in)
{
    cb_run r = {.in = in, .ncarriers = ld_carriers_count(in->cfg)};
    r.trades = malloc((in->n ? in->n : 1) * sizeof *r.trades);
    r.carriers = calloc(r.ncarriers, sizeof *r.carriers);
    int rc = r.trades && r.carriers ? ld_carriers_run(in->cfg, start_share, &r) : -ENOMEM;
    for (unsigned c = 0; rc == 0 && r.carriers && c < r.ncarriers; c++)
        rc = r.carriers[c].rc;
    free(r.carriers);
    free(r.trades);
    return rc;
}
