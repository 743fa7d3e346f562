/* micro_park.c: the CPU one park and wake through a timer costs, at 1, 10^3 and 10^6
 * sleepers, on the runtime's timing wheel (ld_gt_sleep_ns) and on the design it
 * replaced, a libuv timer per green thread (libuv keeps its timers in a heap).
 *
 * Every sleeper sleeps 100 µs at a time, which libuv rounds up to 1 ms. The cost of a
 * sleep is the scheduler thread's CPU time over two runs that differ only in their
 * number of sleeps, divided by the extra sleeps: spawning, first faults and teardown
 * cancel out. One scheduler serves every run, so the stacks are warm after the first.
 */
#include "micro.h"

#include <errno.h>
#include <uv.h>

#define PARK_SLEEP_NS 100000u
#define PARK_UV_MS 1u

typedef struct park_size {
    size_t n;
    unsigned extra; /* sleeps the second run adds per sleeper */
    const char *wheel_name, *heap_name;
} park_size;

static const park_size park_sizes[] = {
    {1, 500, "wheel_1_ns", "heap_1_ns"},
    {1000, 20, "wheel_1k_ns", "heap_1k_ns"},
    {1000000, 2, "wheel_1m_ns", "heap_1m_ns"},
};

typedef struct park_run {
    ld_sched *s;
    unsigned sleeps; /* per sleeper */
    int heap;        /* 1: a libuv timer per thread; 0: the wheel */
} park_run;

/* A libuv timer and the thread it wakes, on that thread's stack. */
typedef struct uv_sleeper {
    uv_timer_t timer; /* first, so the handle's address is the sleeper's */
    ld_gt *g;
} uv_sleeper;

static void uv_woke(uv_timer_t *t)
{
    ld_gt_unpark(((uv_sleeper *)t)->g);
}

static void uv_closed(uv_handle_t *h)
{
    ld_gt_unpark(((uv_sleeper *)h)->g);
}

/* The replaced design: start the timer against a fresh loop clock, park, and close the
 * handle before the stack it lives on goes away. */
static void heap_sleeper(park_run *r)
{
    uv_sleeper u = {.g = ld_gt_self()};
    uv_loop_t *loop = ld_sched_loop(r->s);
    uv_timer_init(loop, &u.timer);
    for (unsigned k = 0; k < r->sleeps; k++) {
        uv_update_time(loop);
        uv_timer_start(&u.timer, uv_woke, PARK_UV_MS, 0);
        ld_gt_park();
    }
    uv_close((uv_handle_t *)&u.timer, uv_closed);
    ld_gt_park();
}

static void sleeper(void *arg)
{
    park_run *r = arg;
    if (r->heap) {
        heap_sleeper(r);
        return;
    }
    for (unsigned k = 0; k < r->sleeps; k++)
        ld_gt_sleep_ns(PARK_SLEEP_NS);
}

/* n sleepers, run to the end; the scheduler thread's CPU time for it all. */
static int park_cpu(park_run *r, size_t n, int64_t *cpu_ns)
{
    int64_t t0 = ld_micro_cpu_ns();
    for (size_t i = 0; i < n; i++) {
        int rc = ld_gt_spawn(r->s, sleeper, r, NULL);
        if (rc) {
            ld_sched_run(r->s);
            return rc;
        }
    }
    int rc = ld_sched_run(r->s);
    *cpu_ns = ld_micro_cpu_ns() - t0;
    return rc;
}

/* CPU per sleep: one run with one sleep each, one with `extra` more. */
static int park_cost(park_run *r, const park_size *z, double *ns)
{
    int64_t one = 0, more = 0;
    r->sleeps = 1;
    int rc = park_cpu(r, z->n, &one);
    r->sleeps = 1 + z->extra;
    if (rc == 0)
        rc = park_cpu(r, z->n, &more);
    *ns = (double)(more - one) / ((double)z->n * z->extra);
    return rc;
}

/* A warm-up run first, so both designs find every stack faulted in already. */
static int park_size_figures(park_run *r, const park_size *z, ld_figures *f)
{
    int64_t warm;
    double wheel, heap;
    r->heap = 0;
    r->sleeps = 1;
    int rc = park_cpu(r, z->n, &warm);
    if (rc == 0)
        rc = park_cost(r, z, &wheel);
    r->heap = 1;
    if (rc == 0)
        rc = park_cost(r, z, &heap);
    if (rc)
        return rc;
    ld_figure_add(f, z->wheel_name, wheel, "ns");
    ld_figure_add(f, z->heap_name, heap, "ns");
    return 0;
}

int ld_micro_park(const ld_job_input *in)
{
    park_run r = {0};
    /* Own stacks: a heap sleeper keeps its libuv timer on its stack while it parks,
     * which copy mode, moving parked frames, does not allow. */
    ld_sched_config cfg = {.mode = LD_STACK_OWN};
    int rc = ld_sched_create(&r.s, &cfg);
    if (rc)
        return rc;
    for (size_t i = 0; rc == 0 && i < sizeof park_sizes / sizeof park_sizes[0]; i++)
        if (park_sizes[i].n <= ld_micro_max(in))
            rc = park_size_figures(&r, &park_sizes[i], in->figures);
    ld_sched_destroy(r.s);
    return rc;
}
