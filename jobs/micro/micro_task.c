/* micro_task.c: one green thread's whole life against an OS thread's.
 *
 * A task is spawned, runs, parks on a deadline (a sleep of TASK_SLEEP_NS), wakes,
 * returns and is joined, n of them at once, as an operation's tasks are: a driver
 * spawns them all, then joins each. An OS thread lives the same life: pthread_create,
 * clock_nanosleep for the same span, return, pthread_join.
 *
 * The cost of one life is the margin between a run of n tasks and one of n/10 (OS
 * threads: n/5), divided by the tasks between them, so that setting up, the sleep
 * itself and tearing down cancel out, as in the callgrind figure of
 * scripts/bench-task-cost: the wall time, the CPU time (the scheduler thread's; for
 * OS threads the process's, over all of them), and where the machine exposes hardware
 * counters the instructions and cycles spent in user space (for OS threads, most of
 * whose life is in the kernel, that is the smaller part). counters_exposed says which:
 * 1 with the counter figures, 0 without them. Each run is the best of TASK_REPS.
 *
 * Green threads take their chunks (or stacks) from a depot reserved and faulted in
 * before the clock, as the carrier strategies do, in the run's --stack-mode.
 */
#include "metrics.h"
#include "micro.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define TASK_SLEEP_NS 20000u
#define TASK_GREEN_MAX 100000u
#define TASK_OS_MAX 500u
#define TASK_REPS 3

/* What one run cost; counters stay zero where not exposed. */
typedef struct task_cost {
    int64_t wall_ns;
    int64_t cpu_ns;
    uint64_t instructions;
    uint64_t cycles;
} task_cost;

/* A green run: n tasks, their handles, the first error. */
typedef struct task_run {
    ld_gt **g;
    size_t n;
    int rc;
} task_run;

static void green_life(void *arg)
{
    (void)arg;
    ld_gt_sleep_ns(TASK_SLEEP_NS);
}

/* Spawn every task, then join each: the joins wait for the sleeps. */
static void green_driver(ld_sched *s, void *arg)
{
    task_run *r = arg;
    size_t spawned = 0;

    while (spawned < r->n && r->rc == 0) {
        r->rc = ld_gt_spawn(s, green_life, NULL, &r->g[spawned]);
        spawned += r->rc == 0;
    }
    for (size_t i = 0; i < spawned; i++) {
        int rc = ld_gt_join(r->g[i]);
        r->rc = r->rc ? r->rc : rc;
    }
}

static void *os_life(void *arg)
{
    struct timespec ts = {0, TASK_SLEEP_NS};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
    return arg;
}

/* n OS threads at once, then their joins. */
static int os_run(size_t n, pthread_t *t)
{
    size_t made = 0;
    int err = 0;

    while (made < n && (err = pthread_create(&t[made], NULL, os_life, NULL)) == 0)
        made++;
    for (size_t i = 0; i < made; i++)
        pthread_join(t[i], NULL);
    return -err;
}

static int64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The clocks and counters around one run. */
typedef struct task_clock {
    const ld_micro_counters *counters;
    int os; /* CPU of the whole process, not of this thread */
} task_clock;

static task_cost clock_read(const task_clock *k)
{
    task_cost c = {ld_now_ns(), k->os ? process_cpu_ns() : ld_micro_cpu_ns(), 0, 0};
    ld_micro_counters_read(k->counters, &c.instructions, &c.cycles);
    return c;
}

static task_cost cost_since(const task_clock *k, task_cost a)
{
    task_cost b = clock_read(k);
    return (task_cost){b.wall_ns - a.wall_ns, b.cpu_ns - a.cpu_ns,
                       b.instructions - a.instructions, b.cycles - a.cycles};
}

static void cost_min(task_cost *best, task_cost c)
{
    best->wall_ns = c.wall_ns < best->wall_ns ? c.wall_ns : best->wall_ns;
    best->cpu_ns = c.cpu_ns < best->cpu_ns ? c.cpu_ns : best->cpu_ns;
    best->instructions =
        c.instructions < best->instructions ? c.instructions : best->instructions;
    best->cycles = c.cycles < best->cycles ? c.cycles : best->cycles;
}

static const task_cost cost_none = {INT64_MAX, INT64_MAX, UINT64_MAX, UINT64_MAX};

/* One life's cost, the margin between the best runs at `large` and at `small`. */
typedef struct task_margin {
    double wall_ns, cpu_ns, instructions, cycles;
} task_margin;

static task_margin margin(task_cost small, task_cost large, size_t n_small,
                          size_t n_large)
{
    double d = (double)(n_large - n_small);
    return (task_margin){(double)(large.wall_ns - small.wall_ns) / d,
                         (double)(large.cpu_ns - small.cpu_ns) / d,
                         ((double)large.instructions - (double)small.instructions) / d,
                         ((double)large.cycles - (double)small.cycles) / d};
}

/* Green lives at n tasks, best of TASK_REPS, on a depot reserved beforehand. */
static int green_best(const ld_sched_config *cfg, task_run *r, const task_clock *k,
                      task_cost *best)
{
    *best = cost_none;
    for (int rep = 0; rep < TASK_REPS; rep++) {
        r->rc = 0;
        task_cost t0 = clock_read(k);
        int rc = ld_micro_run_green(cfg, green_driver, r);
        task_cost c = cost_since(k, t0);
        if (rc || r->rc)
            return rc ? rc : r->rc;
        cost_min(best, c);
    }
    return 0;
}

static int green_margin(const ld_job_input *in, size_t n, const ld_micro_counters *ctr,
                        task_margin *m)
{
    ld_stack_depot *depot;
    task_clock k = {ctr, 0};
    task_cost small, large;
    task_run r = {.g = malloc(n * sizeof *r.g)};
    int rc = r.g ? ld_stack_depot_create(&depot, in->cfg->stack_size, in->cfg->stack_mode)
                 : -ENOMEM;
    if (rc) {
        free(r.g);
        return rc;
    }
    ld_sched_config cfg = {.depot = depot};
    rc = ld_stack_depot_reserve(depot, n + 1);
    r.n = n / 10;
    if (rc == 0)
        rc = green_best(&cfg, &r, &k, &small);
    r.n = n;
    if (rc == 0)
        rc = green_best(&cfg, &r, &k, &large);
    if (rc == 0)
        *m = margin(small, large, n / 10, n);
    ld_stack_depot_destroy(depot);
    free(r.g);
    return rc;
}

static int os_best(size_t n, pthread_t *t, const task_clock *k, task_cost *best)
{
    *best = cost_none;
    for (int rep = 0; rep < TASK_REPS; rep++) {
        task_cost t0 = clock_read(k);
        int rc = os_run(n, t);
        task_cost c = cost_since(k, t0);
        if (rc)
            return rc;
        cost_min(best, c);
    }
    return 0;
}

static int os_margin(size_t n, const ld_micro_counters *ctr, task_margin *m)
{
    pthread_t *t = malloc(n * sizeof *t);
    task_clock k = {ctr, 1};
    task_cost small, large;
    if (t == NULL)
        return -ENOMEM;
    int rc = os_best(n / 5, t, &k, &small);
    if (rc == 0)
        rc = os_best(n, t, &k, &large);
    if (rc == 0)
        *m = margin(small, large, n / 5, n);
    free(t);
    return rc;
}

static void add_figures(ld_figures *f, task_margin g, task_margin o, int counters)
{
    ld_figure_add(f, "green_ns", g.wall_ns, "ns");
    ld_figure_add(f, "green_cpu_ns", g.cpu_ns, "ns");
    ld_figure_add(f, "os_ns", o.wall_ns, "ns");
    ld_figure_add(f, "os_cpu_ns", o.cpu_ns, "ns");
    ld_figure_add(f, "speedup", o.wall_ns / g.wall_ns, "x");
    ld_figure_add(f, "counters_exposed", counters, "bool");
    if (!counters)
        return;
    ld_figure_add(f, "green_instructions", g.instructions, "instructions");
    ld_figure_add(f, "green_cycles", g.cycles, "cycles");
    ld_figure_add(f, "os_user_instructions", o.instructions, "instructions");
    ld_figure_add(f, "os_user_cycles", o.cycles, "cycles");
}

/* The counters are opened inheriting before any OS thread of the figure is made, so
 * that the OS threads' own counts join this thread's as they exit. */
int ld_micro_task(const ld_job_input *in)
{
    size_t max = ld_micro_max(in);
    size_t n_green = max < TASK_GREEN_MAX ? max : TASK_GREEN_MAX;
    size_t n_os = max < TASK_OS_MAX ? max : TASK_OS_MAX;
    ld_micro_counters ctr;
    task_margin g = {0}, o = {0};
    int counters = ld_micro_counters_open(&ctr, 1) == 0;
    int rc = green_margin(in, n_green, &ctr, &g);
    if (rc == 0)
        rc = os_margin(n_os, &ctr, &o);
    ld_micro_counters_close(&ctr);
    if (rc == 0)
        add_figures(in->figures, g, o, counters);
    return rc;
}
