/* settle_callbacks.c: stackless settlement, one libuv timer state machine per trade.
 *
 * Each trade is a uv_timer_t and the index of its next call; the timer's callback
 * starts the next call or finishes the trade. There is no stack to switch, so this is
 * the floor the green strategies are measured against.
 */
#include "carriers.h"
#include "settle.h"

#include <errno.h>
#include <stdlib.h>

typedef struct cb_trade {
    uv_timer_t timer; /* first, so the handle's address is the trade's */
    const ld_job_input *in;
    size_t index;
    int call; /* the call now in flight */
} cb_trade;

typedef struct cb_run {
    const ld_job_input *in;
    cb_trade *trades;
    unsigned ncarriers;
} cb_run;

/* Start the next call that is made, or finish the trade when none is left. */
static void next_call(cb_trade *t);

static void call_done(uv_timer_t *timer)
{
    cb_trade *t = (cb_trade *)timer;
    t->call++;
    next_call(t);
}

static void next_call(cb_trade *t)
{
    const ld_settle_plan *plan = (const ld_settle_plan *)t->in->prepared + t->index;
    while (t->call < LD_SETTLE_CALLS && plan->latency_ns[t->call] == 0)
        t->call++;
    if (t->call == LD_SETTLE_CALLS) {
        ld_settle_finish(t->in, t->index);
        uv_close((uv_handle_t *)&t->timer, NULL);
        return;
    }
    /* libuv timers count whole milliseconds; round up so no call is cut short. */
    uint64_t ms = ((uint64_t)plan->latency_ns[t->call] + 999999) / 1000000;
    uv_update_time(t->timer.loop);
    uv_timer_start(&t->timer, call_done, ms, 0);
}

/* Carrier c starts the trades c, c + N, ... on its loop; the scheduler runs the loop. */
static int start_share(unsigned c, ld_sched *s, void *ctx)
{
    cb_run *r = ctx;
    for (size_t i = c; i < r->in->n; i += r->ncarriers) {
        cb_trade *t = &r->trades[i];
        *t = (cb_trade){.in = r->in, .index = i};
        int rc = uv_timer_init(ld_sched_loop(s), &t->timer);
        if (rc)
            return rc;
        next_call(t);
    }
    return 0;
}

int ld_settle_callbacks(const ld_job_input *in)
{
    cb_run r = {.in = in, .ncarriers = ld_carriers_count(in->cfg)};
    r.trades = malloc((in->n ? in->n : 1) * sizeof *r.trades);
    if (!r.trades)
        return -ENOMEM;
    int rc = ld_carriers_run(in->cfg, start_share, &r);
    free(r.trades);
    return rc;
}
