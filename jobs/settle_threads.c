/* settle_threads.c: the platform-thread baseline, a fixed pool of OS threads.
 *
 * --os-threads threads take trades from a shared counter, as an ExecutorService does,
 * and each call blocks its thread. Concurrency is capped at the pool size, so the
 * makespan is about trades / os_threads times a trade's latency. The threads are a
 * census crew: one that finds no trade left waits, as an ExecutorService's threads wait
 * for its shutdown, until the last is made, so the pool has its size at once.
 */
#include "census.h"
#include "settle.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct pool_run {
    const ld_job_input *in;
    atomic_size_t next;
    ld_census_crew crew; /* holds every thread until the last is made */
} pool_run;

/* A pool thread: take the next trade, make its calls one by one, repeat. */
static void *pool_thread(void *arg)
{
    pool_run *r = arg;
    const ld_settle_plan *plans = r->in->prepared;
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
        if (i >= r->in->n)
            return NULL;
        for (int c = 0; c < LD_SETTLE_CALLS; c++)
            if (plans[i].latency_ns[c] > 0)
                ld_settle_block_ns(plans[i].latency_ns[c]);
        ld_settle_finish(r->in, i);
    }
}

int ld_settle_threads(const ld_job_input *in)
{
    const ld_settle_config *sc = in->cfg->opts;
    unsigned size = (unsigned)sc->os_threads;
    pthread_t *threads = malloc(size * sizeof *threads);
    if (!threads)
        return -ENOMEM;
    pool_run r = {.in = in};
    atomic_init(&r.next, 0);
    ld_census_crew_init(&r.crew);
    unsigned started = 0;
    int rc = 0;
    /* Small stacks: the pool's cost should be its threads, not 8 MiB reservations. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (; started < size; started++) {
        int err = ld_census_spawn(&r.crew, &threads[started], &attr, pool_thread, &r);
        if (err) {
            rc = -err;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    /* A failed create still lets the started threads drain the queue, so no trade is
     * left unsettled; the error is reported all the same. */
    ld_census_crew_complete(&r.crew);
    for (unsigned t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    ld_census_crew_destroy(&r.crew);
    free(threads);
    return rc;
}
