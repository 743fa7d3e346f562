/* models_threads.c: the two strategies whose tasks block an OS thread for the delay,
 * each on a fixed number of threads, its thread cap.
 *
 * threads             --thread-cap threads, started with the operation and stopped
 *                     after it, as a benchmark's newFixedThreadPool in a
 *                     try-with-resources is
 * stackless-blocking  coroutines calling Thread.sleep on Dispatchers.IO: each holds
 *                     one of the dispatcher's LD_MODELS_DISPATCHER threads for its
 *                     whole sleep, so as far as time goes it has that thread cap
 *
 * Both are the pinned workers of workers.h, spread over the run's CPUs, taking tasks
 * from one counter; as a ThreadPoolExecutor makes a thread per task submitted until
 * it has its core size, neither has more threads than tasks. Starting and stopping
 * the threads are inside the operation, and reported as the figures pool_start_ms
 * and pool_stop_ms (named for the Java pool they model), so that what they cost is
 * seen apart from the rounds of sleep.
 */
#include "metrics.h"
#include "models.h"
#include "workers.h"

#include <errno.h>
#include <time.h>

const char *const ld_models_capped_figures[2] = {"pool_start_ms", "pool_stop_ms"};

/* A task: sleep until its deadline, from the task's start, blocking the thread. */
static void sleep_task(void *ctx, size_t index, unsigned worker)
{
    (void)index;
    (void)worker;
    const uint64_t *delay_ns = ctx;
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    uint64_t ns = (uint64_t)at.tv_nsec + *delay_ns;
    at.tv_sec += (time_t)(ns / 1000000000u);
    at.tv_nsec = (long)(ns % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
        ;
}

/* One operation on `threads` workers, the run's CPUs round-robin. */
static int capped_operation(const ld_job_input *in, uint64_t threads)
{
    const ld_models_config *mc = in->cfg->opts;
    ld_job_config sized = *in->cfg;
    sized.workers = (unsigned)threads;
    ld_cpus cpus;
    ld_job_worker_cpus(&sized, &cpus);
    ld_workers *workers;
    int rc = ld_workers_create(&workers, &cpus);
    if (rc != 0)
        return rc;
    ld_figure_add(in->figures, ld_models_capped_figures[0],
                  (double)(ld_now_ns() - in->t0) / 1e6, "ms");
    uint64_t delay_ns = ld_models_delay_ns(mc);
    rc = ld_workers_run(workers, (size_t)mc->tasks, sleep_task, &delay_ns);
    int64_t stop = ld_now_ns();
    ld_workers_destroy(workers);
    ld_figure_add(in->figures, ld_models_capped_figures[1],
                  (double)(ld_now_ns() - stop) / 1e6, "ms");
    return rc;
}

/* The threads under a cap: a thread per task up to the cap. */
static uint64_t capped(const ld_models_config *mc, uint64_t cap)
{
    return cap < mc->tasks ? cap : mc->tasks;
}

uint64_t ld_models_capped_threads(const ld_models_config *mc, const ld_strategy *s)
{
    if (s->run == ld_models_threads)
        return capped(mc, mc->thread_cap);
    return s->run == ld_models_stackless_blocking ? capped(mc, LD_MODELS_DISPATCHER) : 0;
}

int ld_models_threads(const ld_job_input *in)
{
    const ld_models_config *mc = in->cfg->opts;
    return capped_operation(in, capped(mc, mc->thread_cap));
}

int ld_models_stackless_blocking(const ld_job_input *in)
{
    return capped_operation(in, capped(in->cfg->opts, LD_MODELS_DISPATCHER));
}
