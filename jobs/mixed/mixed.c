/* mixed.c: the mixed job's declaration: options, columns, the plans made before any
 * strategy runs, and its strategy table. */
#include "carriers.h"
#include "mixed.h"

#include <errno.h>
#include <stdlib.h>

/* Settle's plans through settle's own prepare, under settle's options as mixed holds
 * them (--io sleep: every call a wait); the critical path is its bound. */
static int mixed_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                         void **prepared, int64_t *bound_ns)
{
    const ld_mixed_config *mc = cfg->opts;
    ld_mixed_prepared *p = calloc(1, sizeof *p);
    if (!p)
        return -ENOMEM;
    p->settle = (ld_settle_config){.latency_scale = mc->latency_scale,
                                   .fail_rate = mc->fail_rate,
                                   .io = LD_SETTLE_SLEEP};
    p->var = (ld_var_config){.sims = mc->sims, .kernel = mc->kernel};
    ld_job_config settle_cfg = *cfg;
    settle_cfg.opts = &p->settle;
    int rc =
        ld_settle_job.prepare(&settle_cfg, trades, n, &p->plans, &p->critical_path_ns);
    if (rc != 0) {
        free(p);
        return rc;
    }
    *prepared = p;
    *bound_ns = p->critical_path_ns;
    return 0;
}

static void mixed_release(void *prepared)
{
    ld_mixed_prepared *p = prepared;
    ld_settle_job.release(p->plans);
    free(p);
}

/* Two green threads per trade and settle's plan; shared-yield's buffer of --sims
 * doubles per trade, the largest part; the three phases' results. */
static uint64_t mixed_resident_bytes(const ld_job_config *cfg, size_t n)
{
    const ld_mixed_config *mc = cfg->opts;
    return ld_gt_resident_bytes(cfg->stack_mode, cfg->stack_size, 2 * n) +
           (uint64_t)n * (512 + 3 * 48 + mc->sims * sizeof(double));
}

/* The most threads a run holds at once: the carriers, the pool and the thread the
 * carriers run beside the pool from. */
static unsigned mixed_threads(const ld_job_config *cfg, const ld_strategy *s)
{
    (void)s;
    ld_cpus workers;
    ld_job_worker_cpus(cfg, &workers);
    return ld_carriers_count(cfg) + workers.n + 1;
}

/* The green threads the three phases spawn, which the harness reserves before the
 * clock: a settle thread per trade, a VaR thread per trade in the shared layouts, a
 * spawner per carrier. */
static uint64_t mixed_stacks(const ld_job_config *cfg, const ld_strategy *s, uint64_t n)
{
    int shared = s->run == ld_mixed_shared || s->run == ld_mixed_shared_yield;
    return (shared ? 2 : 1) * n + ld_carriers_count(cfg);
}

static const ld_strategy mixed_strategies[] = {
    {"split", "settle's carriers on --settle-cpus CPUs, VaR on a pool pinned to the rest",
     ld_mixed_split, LD_ON_OWN},
    {"shared", "VaR as a green thread per trade on settle's carriers, run to completion",
     ld_mixed_shared, LD_ON_OWN},
    {"shared-yield", "shared, each VaR yielding every --yield-every simulations",
     ld_mixed_shared_yield, LD_ON_OWN},
    {"oversubscribed", "carriers and a VaR pool on every CPU, the kernel arbitrating",
     ld_mixed_oversubscribed, LD_ON_OWN},
};

#define AT(field) offsetof(ld_mixed_config, field)

/* The first four are settle's and var's, the same declarations: a value goes to each
 * job. */
static const ld_opt mixed_opts[] = {
    LD_SETTLE_OPT_LATENCY_SCALE(AT(latency_scale)),
    LD_SETTLE_OPT_FAIL_RATE(AT(fail_rate)),
    LD_VAR_OPT_SIMS(AT(sims)),
    LD_VAR_OPT_KERNEL(AT(kernel)),
    {"yield-every", LD_OPT_COUNT, AT(yield_every), 1, 100000000, 1000, NULL, "K",
     "shared-yield: a VaR yields its carrier every K simulations (default 1000)",
     LD_OPT_RESULT, NULL},
    {"settle-cpus", LD_OPT_COUNT, AT(settle_cpus), 1, LD_CPUS_MAX, 1, NULL, "N",
     "split: CPUs of the rank for settle's carriers, the rest for VaR (default 1; "
     "at most the rank's CPUs less one, else clamped and said so in the figures)",
     LD_OPT_RESULT, NULL},
};

#define COL(field) offsetof(ld_mixed_result, field)

static const ld_column mixed_columns[] = {
    LD_SETTLE_COL_STATUS(COL(status)),
    LD_SETTLE_COL_FAILED_CHECK(COL(failed_check)),
    {"latency_ns", LD_COL_I64, "ns", COL(latency_ns),
     "from the together phase's start to the trade's settlement", 0},
    {"var", LD_COL_F64, "USD", COL(var), "95% one-day VaR in dollars, as var's", 0},
};

/* The main table: settle's tail and VaR's throughput against alone, both together
 * against the two alone, and the longest a VaR held a carrier. */
static const char *const mixed_table_figures[] = {
    "settle_p99_ms", "p99_x",    "var_per_s",   "var_x",
    "over_max",      "over_sum", "hold_max_ms", NULL};

const ld_job ld_mixed_job = {
    .name = "mixed",
    .summary = "settle and VaR at once on each rank, over the same trades: why the "
               "design splits the work",
    .notes = "each run is settle alone, VaR alone, then both in the strategy's layout; "
             "figures set the last against the first two (_x: together over alone)",
    .opt_in = 1,
    .strategies = mixed_strategies,
    .nstrategies = LD_LEN(mixed_strategies),
    .opts = mixed_opts,
    .nopts = LD_LEN(mixed_opts),
    .config_size = LD_JOB_CONFIG_SIZE(ld_mixed_config),
    .columns = mixed_columns,
    .ncolumns = LD_LEN(mixed_columns),
    .result_size = sizeof(ld_mixed_result),
    .table = {LD_TABLE_TASKS, LD_TABLE_THREADS, LD_TABLE_MEMORY},
    .reports = {LD_REPORT_FIGURES},
    .table_figures = mixed_table_figures,
    .prepare = mixed_prepare,
    .release = mixed_release,
    .resident_bytes = mixed_resident_bytes,
    .stacks = mixed_stacks,
    .threads_fn = mixed_threads,
};
