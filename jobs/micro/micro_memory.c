/* micro_memory.c: resident memory per parked green thread, in each stack mode. 10^5
 * threads (at most --micro-max) park at once; the rise in the process's RSS, divided
 * by their number, is what each costs: with a stack of its own, the stack pages it
 * touched, its struct and its page tables; in copy mode, its chunk. */
#include "metrics.h"
#include "micro.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MEMORY_THREADS 100000u

typedef struct memory_run {
    size_t n;
    size_t parked;
    ld_gt **threads;
    int64_t rss_before, rss_parked; /* KiB */
    int rc;
} memory_run;

static void parker(void *arg)
{
    memory_run *m = arg;
    m->parked++;
    ld_gt_park();
}

/* Spawn them all, let every one park, read RSS, then wake and join them. */
static void park_all(ld_sched *s, void *arg)
{
    memory_run *m = arg;
    size_t spawned = 0;
    m->rss_before = ld_proc_rss_kib();
    for (; spawned < m->n && m->rc == 0; spawned++)
        m->rc = ld_gt_spawn(s, parker, m, &m->threads[spawned]);
    if (m->rc)
        spawned--;
    while (m->parked < spawned)
        ld_gt_yield();
    m->rss_parked = ld_proc_rss_kib();
    for (size_t i = 0; i < spawned; i++)
        ld_gt_unpark(m->threads[i]);
    for (size_t i = 0; i < spawned; i++)
        ld_gt_join(m->threads[i]);
}

/* KiB per parked thread in one mode, on a scheduler (and stacks) of its own. */
static int memory_in_mode(enum ld_stack_mode mode, size_t n, double *kib)
{
    ld_sched_config cfg = {.mode = mode};
    memory_run m = {.n = n};
    /* Touched before the first RSS reading, so the array is not counted. */
    m.threads = malloc(m.n * sizeof *m.threads);
    if (!m.threads)
        return -ENOMEM;
    memset(m.threads, 0, m.n * sizeof *m.threads);
    int rc = ld_micro_run_green(&cfg, park_all, &m);
    free(m.threads);
    if (rc || m.rc)
        return rc ? rc : m.rc;
    *kib = (double)(m.rss_parked - m.rss_before) / (double)m.n;
    return 0;
}

int ld_micro_memory(const ld_job_input *in)
{
    size_t n = MEMORY_THREADS < ld_micro_max(in) ? MEMORY_THREADS : ld_micro_max(in);
    double own = 0, copy = 0;
    int copies = ld_stack_mode_supported(LD_STACK_COPY);
    int rc = memory_in_mode(LD_STACK_OWN, n, &own);
    if (rc == 0 && copies)
        rc = memory_in_mode(LD_STACK_COPY, n, &copy);
    if (rc)
        return rc;
    ld_figure_add(in->figures, "threads", (double)n, "threads");
    ld_figure_add(in->figures, "own_kib_per_thread", own, "KiB");
    if (copies)
        ld_figure_add(in->figures, "copy_kib_per_thread", copy, "KiB");
    return 0;
}
