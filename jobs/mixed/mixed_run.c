/* mixed_run.c: the four strategies: settle alone, VaR alone, then both in a layout,
 * and the figures that set the last against the first two.
 *
 * The alone phases are the baselines every layout is measured against in the same
 * run: settle on carriers on every CPU of the rank, the VaR on a pool pinned to them.
 * Each phase has its buffers made and touched before its clock starts.
 */
#include "carriers.h"
#include "mixed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How a layout places the two halves. */
typedef struct mixed_layout {
    int split;             /* settle's CPUs apart from the pool's */
    enum ld_mixed_var var; /* where the VaR runs */
    uint64_t yield_every;  /* green VaR: simulations between yields; 0: none */
} mixed_layout;

/* Settle's CPUs and the pool's under a layout: every CPU of the rank for each, or, for
 * split, the first --settle-cpus for the carriers and the rest for the pool. A rank
 * of one CPU has nothing to split: both halves get it. */
static void place(ld_mixed_phase *p, const ld_job_config *cfg, const mixed_layout *l)
{
    const ld_mixed_config *mc = cfg->opts;
    ld_cpus all = {0};
    if (cfg->cpus)
        all = *cfg->cpus;
    p->settle_cpus = all;
    ld_job_worker_cpus(cfg, &p->var_cpus);
    if (!l->split || all.n < 2)
        return;
    unsigned s = mc->settle_cpus < all.n ? (unsigned)mc->settle_cpus : all.n - 1;
    p->settle_cpus.n = s;
    p->var_cpus.n = all.n - s;
    memcpy(p->var_cpus.id, all.id + s, p->var_cpus.n * sizeof all.id[0]);
    p->settle_cfg.carriers = 0; /* one per CPU of its share */
}

static void phase_free(ld_mixed_phase *p)
{
    if (!p)
        return;
    free(p->settle_in.results);
    free(p->var_in.results);
    free(p->var_done_ns);
    free(p->arena);
    free(p);
}

/* A phase's configs and buffers, every byte written now so that none is first touched
 * under the clock. */
static int phase_open(ld_mixed_phase **out, const ld_job_input *in, int settle_on,
                      const mixed_layout *l)
{
    const ld_mixed_prepared *prep = in->prepared;
    size_t n = in->n ? in->n : 1;
    ld_mixed_phase *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->settle_on = settle_on;
    p->var = l->var;
    p->yield_every = l->yield_every;
    p->settle_cfg = *in->cfg;
    p->settle_cfg.opts = &prep->settle;
    p->var_cfg = *in->cfg;
    p->var_cfg.opts = &prep->var;
    place(p, in->cfg, l);
    p->settle_cfg.cpus = &p->settle_cpus;
    p->var_cfg.cpus = &p->var_cpus;
    p->var_cfg.workers = 0;
    size_t arena =
        l->var == LD_MIXED_VAR_GREEN && l->yield_every ? n * prep->var.sims : 0;
    p->settle_in = (ld_job_input){.cfg = &p->settle_cfg,
                                  .trades = in->trades,
                                  .n = in->n,
                                  .prepared = prep->plans,
                                  .results = calloc(n, sizeof(ld_settle_result))};
    p->var_in = (ld_job_input){.cfg = &p->var_cfg,
                               .trades = in->trades,
                               .n = in->n,
                               .results = calloc(n, sizeof(ld_var_result))};
    p->var_done_ns = calloc(n, sizeof *p->var_done_ns);
    p->arena = arena ? malloc(arena * sizeof(double)) : NULL;
    *out = p;
    if (!p->settle_in.results || !p->var_in.results || !p->var_done_ns ||
        (arena && !p->arena))
        return -ENOMEM;
    memset(p->settle_in.results, 0, n * sizeof(ld_settle_result));
    memset(p->var_in.results, 0, n * sizeof(ld_var_result));
    memset(p->var_done_ns, 0, n * sizeof *p->var_done_ns);
    if (arena)
        memset(p->arena, 0, arena * sizeof(double));
    return 0;
}

/* The settle latencies of a phase, counted. */
static void settle_latencies(const ld_mixed_phase *p, ld_hist *h)
{
    const ld_settle_result *r = p->settle_in.results;
    ld_hist_reset(h);
    for (size_t i = 0; i < p->settle_in.n; i++)
        ld_hist_add(h, (uint64_t)r[i].latency_ns);
}

/* When a phase's last VaR was done. */
static int64_t var_end(const ld_mixed_phase *p)
{
    int64_t end = 0;
    for (size_t i = 0; i < p->var_in.n; i++)
        end = p->var_done_ns[i] > end ? p->var_done_ns[i] : end;
    return end;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

/* Trades whose VaR (to the bit) or status differ between the together phase and the
 * alone ones: 0, unless a layout changed a result. */
static double differ(const ld_mixed_phase *t, const ld_mixed_phase *s,
                     const ld_mixed_phase *v)
{
    const ld_settle_result *ts = t->settle_in.results, *ss = s->settle_in.results;
    const ld_var_result *tv = t->var_in.results, *vv = v->var_in.results;
    size_t count = 0;
    for (size_t i = 0; i < t->settle_in.n; i++)
        count += ts[i].status != ss[i].status ||
                 memcmp(&tv[i].var, &vv[i].var, sizeof tv[i].var) != 0;
    return (double)count;
}

#define MS(ns) ((double)(ns) / 1e6)

/* What the figures read of a phase: its settle latencies and when each half ended. */
typedef struct phase_times {
    ld_hist latency;
    double settle_end, var_end, both_end;
} phase_times;

static void phase_times_of(const ld_mixed_phase *p, phase_times *out)
{
    settle_latencies(p, &out->latency);
    out->settle_end = (double)ld_hist_max(&out->latency);
    out->var_end = (double)var_end(p);
    out->both_end = out->settle_end > out->var_end ? out->settle_end : out->var_end;
}

/* Settle's latency and makespan together (t), against alone (s). */
static void settle_figures(ld_figures *f, const phase_times *t, const phase_times *s,
                           int64_t critical_path_ns)
{
    double p99 = (double)ld_hist_quantile(&t->latency, 0.99);
    double alone_p99 = (double)ld_hist_quantile(&s->latency, 0.99);
    ld_figure_add(f, "settle_p50_ms", MS(ld_hist_quantile(&t->latency, 0.5)), "ms");
    ld_figure_add(f, "settle_p99_ms", MS(p99), "ms");
    ld_figure_add(f, "settle_max_ms", MS(t->settle_end), "ms");
    ld_figure_add(f, "alone_p50_ms", MS(ld_hist_quantile(&s->latency, 0.5)), "ms");
    ld_figure_add(f, "alone_p99_ms", MS(alone_p99), "ms");
    ld_figure_add(f, "alone_max_ms", MS(s->settle_end), "ms");
    ld_figure_add(f, "p99_x", ratio(p99, alone_p99), "");
    ld_figure_add(f, "settle_over_cp", ratio(t->settle_end, (double)critical_path_ns),
                  "");
    ld_figure_add(f, "alone_over_cp", ratio(s->settle_end, (double)critical_path_ns), "");
}

/* VaR's throughput together (t) against alone (v), both together against the larger
 * and the sum of the two alone, and how long the carriers were held or late. */
static void var_figures(ld_figures *f, const phase_times *t, const phase_times *s,
                        const phase_times *v, size_t n)
{
    double longer = s->settle_end > v->var_end ? s->settle_end : v->var_end;
    ld_figure_add(f, "var_per_s", ratio((double)n, t->var_end / 1e9), "1/s");
    ld_figure_add(f, "alone_var_per_s", ratio((double)n, v->var_end / 1e9), "1/s");
    ld_figure_add(f, "var_x", ratio(v->var_end, t->var_end), "");
    ld_figure_add(f, "both_ms", MS(t->both_end), "ms");
    ld_figure_add(f, "over_max", ratio(t->both_end, longer), "");
    ld_figure_add(f, "over_sum", ratio(t->both_end, s->settle_end + v->var_end), "");
}

/* How long a VaR green thread held its carrier, and how late settle's wakes came. */
static void carrier_figures(ld_figures *f, const ld_mixed_phase *t,
                            const ld_mixed_phase *s)
{
    ld_figure_add(f, "hold_max_ms", MS(ld_hist_max(&t->hold)), "ms");
    ld_figure_add(f, "hold_p50_us", (double)ld_hist_quantile(&t->hold, 0.5) / 1e3, "us");
    ld_figure_add(f, "hold_total_ms", MS(t->hold.sum), "ms");
    ld_figure_add(f, "late_p99_ms", MS(ld_hist_quantile(&t->late, 0.99)), "ms");
    ld_figure_add(f, "late_max_ms", MS(ld_hist_max(&t->late)), "ms");
    ld_figure_add(f, "alone_late_p99_ms", MS(ld_hist_quantile(&s->late, 0.99)), "ms");
}

/* Every figure of a run: together (t) against settle alone (s) and VaR alone (v). */
static void figures(const ld_job_input *in, const ld_mixed_phase *t,
                    const ld_mixed_phase *s, const ld_mixed_phase *v)
{
    const ld_mixed_prepared *prep = in->prepared;
    phase_times times[3]; /* a histogram each: 30 KiB, on the driver's own stack */
    phase_times_of(t, &times[0]);
    phase_times_of(s, &times[1]);
    phase_times_of(v, &times[2]);
    settle_figures(in->figures, &times[0], &times[1], prep->critical_path_ns);
    var_figures(in->figures, &times[0], &times[1], &times[2], in->n);
    carrier_figures(in->figures, t, s);
    ld_figure_add(in->figures, "differ", differ(t, s, v), "");
}

/* What split asked for settle and what the rank's CPUs let it have: at least one CPU
 * is left to the pool, so a --settle-cpus past the rank's is clamped, and said so. */
static void split_figures(const ld_job_input *in, const ld_mixed_phase *t)
{
    const ld_mixed_config *mc = in->cfg->opts;
    ld_figure_add(in->figures, "settle_cpus", t->settle_cpus.n, "CPUs");
    ld_figure_add(in->figures, "settle_cpus_asked", (double)mc->settle_cpus, "CPUs");
}

/* The together phase's results are the strategy's. */
static void copy_results(const ld_job_input *in, const ld_mixed_phase *t)
{
    const ld_settle_result *s = t->settle_in.results;
    const ld_var_result *v = t->var_in.results;
    ld_mixed_result *out = in->results;
    for (size_t i = 0; i < in->n; i++)
        out[i] = (ld_mixed_result){.latency_ns = s[i].latency_ns,
                                   .var = v[i].var,
                                   .status = s[i].status,
                                   .failed_check = s[i].failed_check};
}

static int mixed_run(const ld_job_input *in, const mixed_layout *l)
{
    const mixed_layout settle_alone = {.var = LD_MIXED_VAR_NONE};
    const mixed_layout var_alone = {.var = LD_MIXED_VAR_POOL};
    ld_mixed_phase *s = NULL, *v = NULL, *t = NULL;
    int rc = phase_open(&s, in, 1, &settle_alone);
    if (rc == 0)
        rc = ld_mixed_phase_run(s);
    if (rc == 0 && (rc = phase_open(&v, in, 0, &var_alone)) == 0)
        rc = ld_mixed_phase_run(v);
    if (rc == 0 && (rc = phase_open(&t, in, 1, l)) == 0)
        rc = ld_mixed_phase_run(t);
    if (rc == 0) {
        figures(in, t, s, v);
        if (l->split)
            split_figures(in, t);
        copy_results(in, t);
    }
    phase_free(s);
    phase_free(v);
    phase_free(t);
    return rc;
}

int ld_mixed_split(const ld_job_input *in)
{
    const mixed_layout l = {.split = 1, .var = LD_MIXED_VAR_POOL};
    return mixed_run(in, &l);
}

int ld_mixed_shared(const ld_job_input *in)
{
    const mixed_layout l = {.var = LD_MIXED_VAR_GREEN};
    return mixed_run(in, &l);
}

int ld_mixed_shared_yield(const ld_job_input *in)
{
    const ld_mixed_config *mc = in->cfg->opts;
    const mixed_layout l = {.var = LD_MIXED_VAR_GREEN, .yield_every = mc->yield_every};
    return mixed_run(in, &l);
}

int ld_mixed_oversubscribed(const ld_job_input *in)
{
    const mixed_layout l = {.var = LD_MIXED_VAR_POOL};
    return mixed_run(in, &l);
}
