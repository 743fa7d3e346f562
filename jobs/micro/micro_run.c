/* micro_run.c: what the micro measurements share: the calling thread's CPU clock, and
 * one body run as a green thread on a scheduler of its own. */
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
