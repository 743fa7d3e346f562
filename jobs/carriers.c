/* carriers.c: carrier threads for the green and stackless strategies. */
#include "carriers.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "census.h"
#include "watchdog.h"

typedef struct carrier {
    pthread_t thread;
    unsigned index;
    int cpu;
    int rc;
    const ld_job_config *cfg;
    ld_carrier_body body;
    void *ctx;
    ld_watchdog *watchdog; /* NULL unless --trace-pinning */
} carrier;

unsigned ld_carriers_count(const ld_job_config *cfg)
{
    if (cfg->carriers)
        return cfg->carriers;
    return cfg->cpus && cfg->cpus->n ? cfg->cpus->n : 1;
}

/* One carrier's life: pin, make the scheduler, let the body spawn, run to the end. */
static void *carrier_main(void *arg)
{
    carrier *c = arg;
    if (c->cpu >= 0 && (c->rc = ld_cpus_pin_self(c->cpu)) != 0)
        return NULL;
    ld_sched_config sc = {.stack_size = c->cfg->stack_size,
                          .mode = c->cfg->stack_mode,
                          .depot = c->cfg->stacks,
                          .trim_after = c->cfg->trim_after};
    ld_sched *s;
    if ((c->rc = ld_sched_create(&s, &sc)) != 0)
        return NULL;
    int slot = c->watchdog ? ld_watchdog_watch(c->watchdog, s, c->index) : -1;
    c->rc = c->body(c->index, s, c->ctx);
    int run_rc = ld_sched_run(s);
    if (c->rc == 0)
        c->rc = run_rc;
    if (c->watchdog)
        ld_watchdog_forget(c->watchdog, slot);
    ld_sched_destroy(s);
    return NULL;
}

int ld_carriers_run(const ld_job_config *cfg, ld_carrier_body body, void *ctx)
{
    unsigned n = ld_carriers_count(cfg);
    carrier *cs = calloc(n, sizeof *cs);
    if (!cs)
        return -ENOMEM;
    unsigned started = 0;
    ld_census_crew crew; /* every carrier lives until the last is made */
    ld_census_crew_init(&crew);
    ld_watchdog *watchdog = NULL;
    int rc = cfg->trace_pinning_ns
                 ? ld_watchdog_start(&watchdog, cfg->trace_pinning_ns, stderr)
                 : 0;
    for (unsigned i = 0; rc == 0 && i < n; i++) {
        int cpu = cfg->cpus && cfg->cpus->n ? cfg->cpus->id[i % cfg->cpus->n] : -1;
        cs[i] = (carrier){.index = i,
                          .cpu = cpu,
                          .cfg = cfg,
                          .body = body,
                          .ctx = ctx,
                          .watchdog = watchdog};
        int err = ld_census_spawn(&crew, &cs[i].thread, NULL, carrier_main, &cs[i]);
        if (err) {
            rc = -err;
            break;
        }
        started++;
    }
    ld_census_crew_complete(&crew);
    for (unsigned i = 0; i < started; i++) {
        pthread_join(cs[i].thread, NULL);
        if (rc == 0)
            rc = cs[i].rc;
    }
    ld_census_crew_destroy(&crew);
    if (watchdog)
        ld_watchdog_stop(watchdog);
    free(cs);
    return rc;
}
