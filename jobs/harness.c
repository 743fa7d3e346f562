/* harness.c: runs one strategy under a probe, so every strategy is measured alike. */
#include "carriers.h"
#include "job.h"
#include "why.h"

#include <errno.h>
#include <string.h>

/* Sample the thread count every millisecond: a pool's threads live for the whole run,
 * and a sampler any faster would cost a visible share of a core. */
#define LD_SAMPLE_PERIOD_US 1000

int ld_figure_add(ld_figures *f, const char *name, double value, const char *unit)
{
    if (f == NULL || f->n >= LD_FIGURES_MAX)
        return -ENOSPC;
    f->v[f->n++] = (ld_figure){.name = name, .value = value, .unit = unit};
    return 0;
}

/* Stacks for one green thread per task, faulted in before the clock starts, as a JVM
 * pre-touches its heap: what is measured is scheduling, not the kernel zeroing pages.
 * The memory still counts, in the run's peak RSS. */
static int reserve_stacks(const ld_job_config *cfg, const ld_strategy *s, size_t n)
{
    if (s->threading != LD_ON_CARRIERS || cfg->stacks == NULL || cfg->cold_stacks)
        return 0;
    return ld_stack_depot_reserve(cfg->stacks, n);
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
    rc = reserve_stacks(&run, s, n);
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
