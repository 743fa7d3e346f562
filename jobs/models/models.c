/* models.c: the models job's table: options, strategies, limits and profile. */
#include "models.h"

#include "carriers.h"
#include "cpus.h"
#include "gt.h"

/* The delay is the limit of every strategy: no operation ends before its tasks'
 * first delay does. */
static int models_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                          void **prepared, int64_t *bound_ns)
{
    (void)trades;
    (void)n;
    *prepared = NULL;
    *bound_ns = (int64_t)ld_models_delay_ns(cfg->opts);
    return 0;
}

/* P capped threads sleep ceil(tasks / P) delays one after another. */
static int64_t models_bound(const void *opts, const ld_strategy *s, int64_t delay_ns)
{
    const ld_models_config *mc = opts;
    uint64_t threads = ld_models_capped_threads(mc, s);
    uint64_t rounds = threads ? (mc->tasks + threads - 1) / threads : 1;
    return delay_ns * (int64_t)rounds;
}

static unsigned models_threads_count(const ld_job_config *cfg, const ld_strategy *s)
{
    return (unsigned)ld_models_capped_threads(cfg->opts, s);
}

/* The job's tasks are its --tasks on every rank, not trades. */
static uint64_t models_tasks(const ld_job_config *cfg)
{
    const ld_models_config *mc = cfg->opts;
    return mc->tasks;
}

/* The profile, which the harness then reserves the stacks under, so that they are
 * charged to it. */
static int models_enter(const ld_job_config *cfg, const ld_strategy *s,
                        ld_job_config *run, ld_figures *figures, void **scope)
{
    (void)s;
    const ld_models_config *mc = cfg->opts;
    return ld_job_profile_enter(&mc->profile, cfg, run, figures, scope);
}

/* A parked green thread per task, as the runtime counts it, at the most. */
static uint64_t models_resident_bytes(const ld_job_config *cfg, size_t n)
{
    return ld_gt_resident_bytes(cfg->stack_mode, cfg->stack_size, n);
}

/* A capped strategy's first thread; else the carriers, and a green strategy's reserved
 * stacks. */
static uint64_t models_mem_floor(const ld_job_config *cfg, const ld_strategy *s,
                                 uint64_t *limit, char *what, size_t whatlen)
{
    const ld_models_config *mc = cfg->opts;
    unsigned cpus;
    ld_job_profile_asked(&mc->profile, &cpus, limit);
    ld_job_config granted = *cfg;
    ld_cpus first = *cfg->cpus;
    if (cpus && cpus < first.n)
        first.n = cpus;
    granted.cpus = &first;
    int own = s->threading == LD_ON_OWN;
    uint64_t n = cfg->cold_stacks ? 0 : ld_job_stacks(&ld_models_job, cfg, s, mc->tasks);
    return ld_job_profile_floor(
        own ? 0 : ld_carriers_count(&granted), own, n,
        ld_gt_resident_bytes(cfg->stack_mode, cfg->stack_size, (size_t)n), what, whatlen);
}

static const ld_strategy models_strategies[] = {
    {"threads", "a pool of --thread-cap OS threads, each task a blocking sleep",
     ld_models_threads, LD_ON_OWN},
    {"green", "one green thread per task, parked until its deadline", ld_models_green,
     LD_ON_CARRIERS},
    {"stackless", "one deadline callback per task on the carriers' loops, no stack",
     ld_models_stackless, LD_ON_LOOPS},
    {"hybrid", "stackless tasks, started and resumed each on a fresh green thread",
     ld_models_hybrid, LD_ON_CARRIERS},
    {"stackless-blocking",
     "stackless tasks sleeping blocking on a dispatcher of 64 OS threads",
     ld_models_stackless_blocking, LD_ON_OWN},
};

#define AT(field) offsetof(ld_models_config, field)

static const ld_opt models_opts[] = {
    {"tasks", LD_OPT_COUNT, AT(tasks), 1, 10000000, 1000, NULL, "N",
     "tasks each operation starts and waits for, per rank (default 1000)", LD_OPT_RESULT,
     NULL},
    {"delay-ms", LD_OPT_REAL, AT(delay_ms), 0.001, 100000, 10, NULL, "MS",
     "each task's wait in ms (default 10)", LD_OPT_RESULT, NULL},
    {"thread-cap", LD_OPT_COUNT, AT(thread_cap), 1, LD_CPUS_MAX, 1000, NULL, "N",
     "threads: OS threads in the pool, per rank (default 1000)", LD_OPT_RESULT, NULL},
    LD_JOB_PROFILE_OPTS(ld_models_config, profile),
};

/* A run under a memory limit that outgrew it shows beside its time, which is then
 * the time until the kill. */
static const char *const models_table_figures[] = {"killed", NULL};

const ld_job ld_models_job = {
    .name = "models",
    .summary = "four models of concurrency: --tasks tasks wait --delay-ms, one "
               "operation per iteration",
    .notes = "the score is operations per second against each strategy's own limit; "
             "JMH's method (fresh processes, warm-up and measurement iterations, JSON) "
             "is loomdist-forks --forks N ... loomdist --jobs models ...",
    .opt_in = 1,
    .strategies = models_strategies,
    .nstrategies = LD_LEN(models_strategies),
    .opts = models_opts,
    .nopts = LD_LEN(models_opts),
    .config_size = LD_JOB_CONFIG_SIZE(ld_models_config),
    .table = {LD_TABLE_TIME, LD_TABLE_OPS, LD_TABLE_LIMIT, LD_TABLE_THREADS,
              LD_TABLE_MEMORY},
    .reports = {LD_REPORT_BOUND, LD_REPORT_FIGURES},
    .table_figures = models_table_figures,
    .bound_name = "limit",
    .bound_attr = "limit_ns",
    .prepare = models_prepare,
    .tasks = models_tasks,
    .tasks_option = "tasks",
    .resident_bytes = models_resident_bytes,
    .threads_fn = models_threads_count,
    .strategy_bound = models_bound,
    .enter = models_enter,
    .leave = ld_job_profile_leave,
    .measure_apart = ld_models_measure_apart,
    .mem_floor = models_mem_floor,
};
