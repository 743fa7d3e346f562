/* micro.c: the micro job's table and what its strategies share. */
#include "micro.h"

#include <time.h>

int64_t ld_micro_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct micro_start {
    ld_sched *s;
    ld_micro_body fn;
    void *arg;
} micro_start;

static void micro_trampoline(void *arg)
{
    micro_start *m = arg;
    m->fn(m->s, m->arg);
}

int ld_micro_run_green(const ld_sched_config *cfg, ld_micro_body fn, void *arg)
{
    ld_sched *s;
    int rc = ld_sched_create(&s, cfg);
    if (rc)
        return rc;
    micro_start m = {.s = s, .fn = fn, .arg = arg};
    rc = ld_gt_spawn(s, micro_trampoline, &m, NULL);
    int run_rc = ld_sched_run(s);
    ld_sched_destroy(s);
    return rc ? rc : run_rc;
}

/* Nothing to prepare: the figures need no trades and have no lower bound. */
static int micro_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                         void **prepared, int64_t *bound_ns)
{
    (void)cfg;
    (void)trades;
    (void)n;
    *prepared = NULL;
    *bound_ns = 0;
    return 0;
}

static void micro_release(void *prepared)
{
    (void)prepared;
}

/* The park family's largest count holds that many stacks, each with one page touched
 * and its share of page tables. */
static uint64_t micro_resident_bytes(const ld_job_config *cfg, size_t n)
{
    (void)n;
    return (uint64_t)cfg->micro_max * (4096 + 512);
}

static const ld_strategy micro_strategies[] = {
    {"switch", "one green-thread switch against ucontext swapcontext", ld_micro_switch,
     LD_ON_ONE},
    {"spawn", "spawn+join of an empty green thread against pthread_create+join",
     ld_micro_spawn, LD_ON_ONE},
    {"park", "CPU per park+wake by timer at 1, 10^3, 10^6 sleepers: wheel vs libuv heap",
     ld_micro_park, LD_ON_ONE},
    {"memory", "resident KiB per parked green thread, over 10^5 of them", ld_micro_memory,
     LD_ON_ONE},
};

const ld_job ld_micro_job = {
    .name = "micro",
    .summary = "the runtime's own costs, each against its reference in the same run",
    .opt_in = 1,
    .strategies = micro_strategies,
    .nstrategies = sizeof micro_strategies / sizeof micro_strategies[0],
    .prepare = micro_prepare,
    .release = micro_release,
    .resident_bytes = micro_resident_bytes,
};
