/* var.c: the var job: Monte Carlo VaR per trade, CPU-bound, and its strategy table. */
#include "var.h"

#include <stdlib.h>

void ld_var_one(const ld_job_input *in, size_t i, ld_trade_result *out, double *scratch)
{
    const ld_job_config *cfg = in->cfg;
    out[i].var =
        ld_var_trade(&in->trades[i], cfg->seed, cfg->sims, cfg->var_kernel, scratch);
}

/* Nothing to prepare, and no bound known in advance: the reference is sequential. */
static int var_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                       void **prepared, int64_t *bound_ns)
{
    (void)cfg, (void)trades, (void)n;
    *prepared = NULL;
    *bound_ns = 0;
    return 0;
}

static void var_release(void *prepared)
{
    free(prepared);
}

static const ld_strategy var_strategies[] = {
    {"sequential", "one thread, trade after trade", ld_var_sequential, LD_ON_ONE},
    {"green", "misused on purpose: one green thread per trade on the carriers",
     ld_var_green, LD_ON_CARRIERS},
    {"pool", "a fixed pool, one worker pinned per CPU of the rank", ld_var_pool,
     LD_ON_WORKERS},
    {"steal", "work-stealing deques, fork-join style, one worker per CPU", ld_var_steal,
     LD_ON_WORKERS},
};

const ld_job ld_var_job = {
    .name = "var",
    .fields = LD_FIELDS_VAR,
    .baseline = "sequential",
    .summary = "Monte Carlo Value-at-Risk, CPU-bound: --sims GBM draws per trade",
    .strategies = var_strategies,
    .nstrategies = sizeof var_strategies / sizeof var_strategies[0],
    .prepare = var_prepare,
    .release = var_release,
};
