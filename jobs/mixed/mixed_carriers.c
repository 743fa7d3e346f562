/* mixed_carriers.c: the carriers of a mixed phase: a green thread per trade settles it,
 * and in the shared layouts another computes its VaR.
 *
 * A settle trade waits out its plan's calls as settle's green strategy does, and
 * notes how late each wake came: the time its carrier was busy with something else
 * when the deadline passed. A VaR trade runs var's kernel on its own stream; under
 * shared-yield in steps of --yield-every simulations with a yield between, so that the
 * carrier's run queue turns; under shared in one go, as a Loom virtual thread that
 * never blocks. Each stretch a VaR thread holds its carrier without switching is
 * counted into the carrier's histogram: how long the carrier was monopolised.
 */
#include "carriers.h"
#include "metrics.h"
#include "mixed.h"

#include <errno.h>
#include <stdlib.h>

typedef struct mixed_run mixed_run;

typedef struct mixed_carrier {
    mixed_run *run;
    ld_mixed_phase *p;
    ld_sched *sched;
    unsigned index, count;
    double *scratch; /* shared: its VaR threads never interleave, so one buffer */
    ld_hist hold, late;
    int rc;
} mixed_carrier;

/* The task handed to each green thread. */
typedef struct mixed_task {
    mixed_carrier *cr;
    size_t index;
} mixed_task;

struct mixed_run {
    ld_mixed_phase *p;
    mixed_carrier *carriers;
    mixed_task *settle_tasks, *var_tasks;
};

/* One trade's calls, each a park until its deadline; its failed check is the plan's. */
static void settle_trade(void *arg)
{
    const mixed_task *t = arg;
    const ld_job_input *in = &t->cr->p->settle_in;
    const ld_settle_plan plan = *ld_settle_plan_of(in, t->index);
    int failed = -1;
    int64_t at = ld_now_ns();
    for (int c = 0; c < LD_SETTLE_CALLS; c++) {
        if (plan.ms[c] == 0)
            continue;
        int64_t latency = ld_settle_latency(in, &plan, c);
        ld_gt_sleep_ns((uint64_t)latency);
        int64_t woke = ld_now_ns();
        ld_hist_add(&t->cr->late, (uint64_t)(woke - at - latency));
        at = woke;
        ld_settle_note(&failed, c, c == plan.failed_check);
    }
    ld_settle_finish(in, t->index, failed);
}

/* The end of one stretch on the carrier: counted, and the next begins after the yield. */
static int64_t held(mixed_carrier *cr, int64_t since, int yield)
{
    ld_hist_add(&cr->hold, (uint64_t)(ld_now_ns() - since));
    if (yield)
        ld_gt_yield();
    return ld_now_ns();
}

/* Trade i's VaR in the kernel's steps, yielding every `every` simulations of the draws
 * and of the P&L; the order statistic is one step. Bit for bit ld_var_trade's. */
static double var_yielding(mixed_carrier *cr, size_t i, uint64_t every, int64_t *since)
{
    const ld_job_input *in = &cr->p->var_in;
    const ld_var_config *vc = in->cfg->opts;
    const ld_trade *t = &in->trades[i];
    uint32_t sims = (uint32_t)vc->sims;
    double *z = cr->p->arena + i * sims;
    ld_pcg32 rng = ld_trade_stream(in->cfg->seed, t->id, LD_STREAM_VAR);
    for (uint32_t a = 0; a < sims; a += (uint32_t)every) {
        uint32_t len = sims - a < every ? sims - a : (uint32_t)every;
        ld_pcg32_normal_fill(&rng, z + a, len);
        *since = held(cr, *since, 1);
    }
    for (uint32_t a = 0; a < sims; a += (uint32_t)every) {
        uint32_t len = sims - a < every ? sims - a : (uint32_t)every;
        ld_var_pnl(z + a, len, t);
        *since = held(cr, *since, 1);
    }
    return -ld_var_order_stat(z, sims, ld_var_index(sims),
                              (enum ld_var_kernel)vc->kernel);
}

/* One trade's VaR as a green thread; when it was done goes beside it. */
static void var_trade(void *arg)
{
    const mixed_task *t = arg;
    mixed_carrier *cr = t->cr;
    ld_mixed_phase *p = cr->p;
    int64_t since = ld_now_ns();
    if (p->yield_every) {
        ld_var_result *out = p->var_in.results;
        out[t->index].var = var_yielding(cr, t->index, p->yield_every, &since);
    } else {
        ld_var_one(&p->var_in, t->index, cr->scratch);
    }
    int64_t now = ld_now_ns();
    ld_hist_add(&cr->hold, (uint64_t)(now - since));
    p->var_done_ns[t->index] = now - p->var_in.t0;
}

/* As a green thread, the way an executor's submit loop starts virtual threads: carrier
 * c starts trades c, c + N, ..., each its settle thread and then its VaR thread,
 * yielding after every ld_carriers_spawn_batch trades, as settle's green strategy
 * does. */
static void spawn_trades(void *arg)
{
    mixed_carrier *cr = arg;
    mixed_run *r = cr->run;
    ld_mixed_phase *p = r->p;
    size_t every = ld_carriers_spawn_batch(&p->settle_cfg), batch = 0;
    for (size_t i = cr->index; i < p->settle_in.n && cr->rc == 0; i += cr->count) {
        if (p->settle_on) {
            r->settle_tasks[i] = (mixed_task){.cr = cr, .index = i};
            cr->rc = ld_gt_spawn(cr->sched, settle_trade, &r->settle_tasks[i], NULL);
        }
        if (cr->rc == 0 && p->var == LD_MIXED_VAR_GREEN) {
            r->var_tasks[i] = (mixed_task){.cr = cr, .index = i};
            cr->rc = ld_gt_spawn(cr->sched, var_trade, &r->var_tasks[i], NULL);
        }
        if (++batch % every == 0)
            ld_gt_yield();
    }
}

/* Carrier c's spawner, made on its own thread; shared's one VaR buffer with it. */
static int carrier_body(unsigned c, ld_sched *s, void *ctx)
{
    mixed_run *r = ctx;
    mixed_carrier *cr = &r->carriers[c];
    cr->sched = s;
    if (r->p->var == LD_MIXED_VAR_GREEN && !r->p->yield_every) {
        const ld_var_config *vc = r->p->var_in.cfg->opts;
        if (!(cr->scratch = malloc(vc->sims * sizeof(double))))
            return -ENOMEM;
    }
    return ld_gt_spawn(s, spawn_trades, cr, NULL);
}

int ld_mixed_carriers(ld_mixed_phase *p)
{
    const ld_job_config *cfg = &p->settle_cfg;
    unsigned n = ld_carriers_count(cfg);
    size_t trades = p->settle_in.n ? p->settle_in.n : 1;
    mixed_run r = {.p = p,
                   .carriers = calloc(n, sizeof *r.carriers),
                   .settle_tasks = malloc(trades * sizeof *r.settle_tasks),
                   .var_tasks = malloc(trades * sizeof *r.var_tasks)};
    int rc = r.carriers && r.settle_tasks && r.var_tasks ? 0 : -ENOMEM;
    for (unsigned c = 0; rc == 0 && c < n; c++) {
        r.carriers[c].run = &r;
        r.carriers[c].p = p;
        r.carriers[c].index = c;
        r.carriers[c].count = n;
    }
    if (rc == 0)
        rc = ld_carriers_run(cfg, carrier_body, &r);
    for (unsigned c = 0; r.carriers && c < n; c++) {
        if (rc == 0)
            rc = r.carriers[c].rc;
        ld_hist_merge(&p->hold, &r.carriers[c].hold);
        ld_hist_merge(&p->late, &r.carriers[c].late);
        free(r.carriers[c].scratch);
    }
    free(r.carriers);
    free(r.settle_tasks);
    free(r.var_tasks);
    return rc;
}
