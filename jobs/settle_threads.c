/* settle_threads.c: the platform-thread baseline, a fixed pool of OS threads.
 *
 * --os-threads threads take trades from a shared counter, as an ExecutorService does,
 * and each call blocks its thread. Concurrency is capped at the pool size, so the
 * makespan is about trades / os_threads times a trade's latency. A thread that finds no
 * trade left waits for the pool's shutdown, as an ExecutorService's threads do, so the
 * pool holds all its threads at once however short the run.
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
    pthread_mutex_t lock; /* guards shutdown */
    pthread_cond_t closed;
    int shutdown; /* every pool thread has been created */
} pool_run;

/* A pool thread out of trades stays alive until the pool is shut down: otherwise the
 * first threads of a short run exit before the last are created, and the pool never
 * has its size. */
static void pool_await_shutdown(pool_run *r)
{
    pthread_mutex_lock(&r->lock);
    while (!r->shutdown)
        pthread_cond_wait(&r->closed, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

/* Let the threads waiting for the shutdown go; called once no more are created. */
static void pool_shutdown(pool_run *r)
{
    pthread_mutex_lock(&r->lock);
    r->shutdown = 1;
    pthread_cond_broadcast(&r->closed);
    pthread_mutex_unlock(&r->lock);
}

/* A pool thread: take the next trade, make its calls one by one, repeat. */
static void *pool_thread(void *arg)
{
    pool_run *r = arg;
    const ld_settle_plan *plans = r->in->prepared;
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
        if (i >= r->in->n) {
            pool_await_shutdown(r);
            return NULL;
        }
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
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.closed, NULL);
    unsigned started = 0;
    int rc = 0;
    /* Small stacks: the pool's cost should be its threads, not 8 MiB reservations. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (; started < size; started++) {
        int err = ld_census_spawn(&threads[started], &attr, pool_thread, &r);
        if (err) {
            rc = -err;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    /* A failed create still lets the started threads drain the queue, so no trade is
     * left unsettled; the error is reported all the same. */
    pool_shutdown(&r);
    for (unsigned t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    pthread_cond_destroy(&r.closed);
    pthread_mutex_destroy(&r.lock);
    free(threads);
    return rc;
}
