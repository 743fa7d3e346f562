/* var.c: the var job: Monte Carlo VaR per trade, CPU-bound: its declaration. */
#include "var.h"

/* Which copy of the kernel's vector loops ran (ld_var_path: 0 generic, 1 AVX2,
 * 2 AVX-512), a figure of every run, so that runs on different paths are told apart. */
static int var_enter(const ld_job_config *cfg, const ld_strategy *s, ld_job_config *run,
                     ld_figures *figures, void **scope)
{
    (void)cfg;
    (void)s;
    (void)run;
    *scope = NULL;
    return figures ? ld_figure_add(figures, "kernel_path", (double)ld_var_path(), "") : 0;
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

const char *const ld_var_kernels[] = {"sort", "select", NULL};

static const ld_opt var_opts[] = {
    LD_VAR_OPT_SIMS(offsetof(ld_var_config, sims)),
    LD_VAR_OPT_KERNEL(offsetof(ld_var_config, kernel)),
};

static const ld_column var_columns[] = {
    {"var", LD_COL_F64, "USD", offsetof(ld_var_result, var),
     "95% one-day VaR in dollars, bit-identical across strategies and ranks", 0},
};

const ld_job ld_var_job = {
    .name = "var",
    .summary = "Monte Carlo Value-at-Risk, CPU-bound: --sims GBM draws per trade",
    .strategies = var_strategies,
    .nstrategies = LD_LEN(var_strategies),
    .opts = var_opts,
    .nopts = LD_LEN(var_opts),
    .config_size = LD_JOB_CONFIG_SIZE(ld_var_config),
    .columns = var_columns,
    .ncolumns = LD_LEN(var_columns),
    .result_size = sizeof(ld_var_result),
    .table = {LD_TABLE_TASKS, LD_TABLE_TIME, LD_TABLE_THROUGHPUT, LD_TABLE_THREADS,
              LD_TABLE_MEMORY, LD_TABLE_IMBALANCE},
    .reports = {LD_REPORT_PER_TASK, LD_REPORT_SPEEDUP, LD_REPORT_FIGURES},
    .baseline = "sequential",
    .enter = var_enter,
};
