/* harness.c: runs one strategy under a probe, so every strategy is measured alike. */
#include "carriers.h"
#include "job.h"

#include <string.h>

/* Sample the thread count every millisecond: a pool's threads live for the whole run,
 * and a sampler any faster would cost a visible share of a core. */
#define LD_SAMPLE_PERIOD_US 1000

int ld_job_measure(const ld_job *job, const ld_strategy *s, const ld_job_config *cfg,
                   const ld_trade *trades, size_t n, const void *prepared,
                   ld_trade_result *out, ld_metrics *m)
{
    (void)job;
    memset(out, 0, n * sizeof *out);
    ld_probe *probe;
    int rc = ld_probe_start(&probe, LD_SAMPLE_PERIOD_US);
    if (rc)
        return rc;
    ld_job_input in = {
        .cfg = cfg, .trades = trades, .n = n, .prepared = prepared, .t0 = ld_now_ns()};
    rc = s->run(&in, out);
    ld_probe_stop(probe, m);
    return rc;
}

void ld_job_worker_cpus(const ld_job_config *cfg, ld_cpus *out)
{
    unsigned n = cfg->workers ? cfg->workers : cfg->cpus->n;
    out->n = n > LD_CPUS_MAX ? LD_CPUS_MAX : n;
    for (unsigned w = 0; w < out->n; w++)
        out->id[w] = cfg->cpus->id[w % cfg->cpus->n];
}

unsigned ld_job_threads(const ld_job_config *cfg, const ld_strategy *s)
{
    switch (s->threading) {
    case LD_ON_ONE:
        return 1;
    case LD_ON_POOL:
        return cfg->pool_size;
    case LD_ON_WORKERS:
        return cfg->workers ? cfg->workers : cfg->cpus->n;
    case LD_ON_CARRIERS:
        break;
    }
    return ld_carriers_count(cfg);
}
