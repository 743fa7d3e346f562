/* harness.c: runs one strategy under a probe, so every strategy is measured alike. */
#include "carriers.h"
#include "cpus.h"
#include "gt.h"
#include "job.h"
#include "metrics.h"
#include "why.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Sample the thread count every millisecond: a pool's threads live for the whole run,
 * and a sampler any faster would cost a visible share of a core. */
#define LD_SAMPLE_PERIOD_US 1000

uint64_t ld_job_stack_bytes(const ld_job_config *cfg)
{
    long page = sysconf(_SC_PAGESIZE);
    if (cfg->stack_mode == LD_STACK_COPY)
        return LD_GT_STACK_CHUNK;
    return (uint64_t)cfg->stack_size + (page > 0 ? (uint64_t)page : 4096u);
}

int ld_job_strategy_open(ld_job_config *cfg)
{
    cfg->stacks = NULL;
    cfg->kept = NULL;
    int rc = ld_stack_depot_create(&cfg->stacks, cfg->stack_size, cfg->stack_mode);
    return rc == 0 ? ld_carriers_keep(&cfg->kept) : rc;
}

/* The carriers end first: their schedulers hold stacks of the depot. */
void ld_job_strategy_close(ld_job_config *cfg)
{
    ld_carriers_end(cfg->kept);
    if (cfg->stacks)
        ld_stack_depot_destroy(cfg->stacks);
    cfg->kept = NULL;
    cfg->stacks = NULL;
}

/* The stacks the strategy needs for the job's tasks, faulted in before the clock
 * starts, as a JVM pre-touches its heap: what is measured is scheduling, not the
 * kernel zeroing pages. The memory still counts, in the run's peak RSS. */
static int reserve_stacks(const ld_job *job, const ld_job_config *cfg,
                          const ld_strategy *s, size_t trades)
{
    if (cfg->stacks == NULL || cfg->cold_stacks)
        return 0;
    uint64_t n = ld_job_stacks(job, cfg, s, ld_job_tasks(job, cfg, trades));
    return n ? ld_stack_depot_reserve(cfg->stacks, (size_t)n) : 0;
}

/* The strategy alone under the probe: its clock starts after the probe's. */
static int probe_run(const ld_strategy *s, ld_job_input *in, ld_metrics *m)
{
    ld_probe *probe;
    int rc = ld_probe_start(&probe, LD_SAMPLE_PERIOD_US);
    if (rc)
        return rc;
    in->t0 = ld_now_ns();
    rc = s->run(in);
    ld_probe_stop(probe, m);
    return rc;
}

/* A job may measure the run in a process of its own; else the job's enter hook puts
 * the run under its profile first, so that the stacks reserved for it are charged to
 * the profile's memory too. */
int ld_job_measure(const ld_job *job, const ld_strategy *s, const ld_job_config *cfg,
                   const ld_trade *trades, size_t n, const void *prepared, void *results,
                   ld_metrics *m, ld_figures *figures)
{
    memset(results, 0, n * job->result_size);
    ld_why_clear(); /* a reason said now is this run's */
    if (figures)
        figures->n = 0;
    if (job->measure_apart) {
        int apart = job->measure_apart(cfg, s, m, figures);
        if (apart != LD_JOB_MEASURE_HERE)
            return apart;
    }
    ld_job_config run = *cfg;
    void *scope = NULL;
    int rc = job->enter ? job->enter(cfg, s, &run, figures, &scope) : 0;
    if (rc)
        return rc;
    rc = reserve_stacks(job, &run, s, n);
    ld_job_input in = {.cfg = &run,
                       .trades = trades,
                       .n = n,
                       .prepared = prepared,
                       .results = results,
                       .figures = figures};
    if (rc == 0)
        rc = probe_run(s, &in, m);
    if (job->leave)
        job->leave(scope, figures);
    return rc;
}

void ld_job_worker_cpus(const ld_job_config *cfg, ld_cpus *out)
{
    unsigned n = cfg->workers ? cfg->workers : cfg->cpus->n;
    out->n = n > LD_CPUS_MAX ? LD_CPUS_MAX : n;
    for (unsigned w = 0; w < out->n; w++)
        out->id[w] = cfg->cpus->id[w % cfg->cpus->n];
}

unsigned ld_job_threads(const ld_job *job, const ld_job_config *cfg, const ld_strategy *s)
{
    switch (s->threading) {
    case LD_ON_ONE:
        return 1;
    case LD_ON_OWN:
        return job->threads_fn ? job->threads_fn(cfg, s) : 1;
    case LD_ON_WORKERS:
        return cfg->workers ? cfg->workers : cfg->cpus->n;
    case LD_ON_CARRIERS:
    case LD_ON_LOOPS:
        break;
    }
    return ld_carriers_count(cfg);
}
