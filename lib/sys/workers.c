/* workers.c: a fixed set of pinned OS worker threads, reused across runs.
 *
 * One mutex guards the run's description and two condition variables: `wake` tells
 * the workers a run (or the stop) has come, `done` tells the caller that every worker
 * has pinned itself, or that every worker has left the current run. Within a run the
 * workers take task indices from an atomic counter, with no lock.
 */
#include "workers.h"

#include "census.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct workers_member {
    ld_workers *owner;
    pthread_t thread;
    unsigned index;
    int cpu;
} workers_member;

struct ld_workers {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_cond_t done;
    workers_member *workers;
    unsigned n;
    unsigned pinned; /* workers past their pinning, failed or not */
    int pin_error;   /* the first pinning failure */
    unsigned busy;   /* workers not yet out of the current run */
    uint64_t run;    /* which run the workers should be in */
    int running;     /* a caller is inside ld_workers_run */
    int stop;
    ld_workers_task fn;
    void *ctx;
    size_t ntasks;
    atomic_size_t next; /* the next task index to hand out */
};

/* Take indices until they run out. Relaxed is enough: the run's fields were published
 * under the lock, and the caller learns of the results under it too. */
static void workers_drain(ld_workers *p, unsigned w, ld_workers_task fn, void *ctx,
                          size_t ntasks)
{
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (i >= ntasks)
            return;
        fn(ctx, i, w);
    }
}

/* A worker pins itself before anything else, reports, then serves one run after
 * another until told to stop. */
static void *worker_main(void *arg)
{
    workers_member *me = arg;
    ld_workers *p = me->owner;
    int rc = ld_cpus_pin_self(me->cpu);
    uint64_t seen = 0;
    pthread_mutex_lock(&p->lock);
    if (rc != 0 && p->pin_error == 0)
        p->pin_error = rc;
    if (++p->pinned == p->n)
        pthread_cond_signal(&p->done);
    for (;;) {
        while (!p->stop && p->run == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stop)
            break;
        seen = p->run;
        ld_workers_task fn = p->fn;
        void *ctx = p->ctx;
        size_t ntasks = p->ntasks;
        pthread_mutex_unlock(&p->lock);
        workers_drain(p, me->index, fn, ctx, ntasks);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Tell the first `started` workers to stop, join them, and free the set. */
static void workers_teardown(ld_workers *p, unsigned started)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (unsigned w = 0; w < started; w++)
        pthread_join(p->workers[w].thread, NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p->workers);
    free(p);
}

/* The set and its synchronisation, before any thread exists. */
static int workers_alloc(ld_workers **out, const ld_cpus *cpus)
{
    ld_workers *p = calloc(1, sizeof *p);
    if (p == NULL)
        return -ENOMEM;
    p->workers = calloc(cpus->n, sizeof *p->workers);
    if (p->workers == NULL) {
        free(p);
        return -ENOMEM;
    }
    p->n = cpus->n;
    atomic_init(&p->next, 0);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    for (unsigned w = 0; w < p->n; w++)
        p->workers[w] = (workers_member){.owner = p, .index = w, .cpu = cpus->id[w]};
    *out = p;
    return 0;
}

/* Start every worker and wait until all have pinned themselves, so that a CPU the
 * process may not use is an error here and not a slow run later. */
int ld_workers_create(ld_workers **out, const ld_cpus *cpus)
{
    ld_workers *p;
    if (out == NULL || cpus == NULL || cpus->n == 0 || cpus->n > LD_CPUS_MAX)
        return -EINVAL;
    int rc = workers_alloc(&p, cpus);
    if (rc != 0)
        return rc;
    for (unsigned w = 0; w < p->n; w++) {
        rc = -ld_census_spawn(NULL, &p->workers[w].thread, NULL, worker_main,
                              &p->workers[w]);
        if (rc != 0) {
            workers_teardown(p, w);
            return rc;
        }
    }
    pthread_mutex_lock(&p->lock);
    while (p->pinned < p->n)
        pthread_cond_wait(&p->done, &p->lock);
    rc = p->pin_error;
    pthread_mutex_unlock(&p->lock);
    if (rc != 0) {
        workers_teardown(p, p->n);
        return rc;
    }
    *out = p;
    return 0;
}

/* Publish the run, wake every worker, and wait for all of them to leave it: a worker
 * leaves only when the counter is past the end, so every task has run by then. */
int ld_workers_run(ld_workers *p, size_t ntasks, ld_workers_task fn, void *ctx)
{
    if (p == NULL || fn == NULL)
        return -EINVAL;
    if (ntasks == 0)
        return 0;
    pthread_mutex_lock(&p->lock);
    if (p->running) {
        pthread_mutex_unlock(&p->lock);
        return -EBUSY;
    }
    p->running = 1;
    p->fn = fn;
    p->ctx = ctx;
    p->ntasks = ntasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    p->busy = p->n;
    p->run++;
    pthread_cond_broadcast(&p->wake);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->lock);
    p->running = 0;
    pthread_mutex_unlock(&p->lock);
    return 0;
}

unsigned ld_workers_count(const ld_workers *p)
{
    return p->n;
}

int ld_workers_cpu(const ld_workers *p, unsigned w)
{
    return w < p->n ? p->workers[w].cpu : -EINVAL;
}

void ld_workers_destroy(ld_workers *p)
{
    if (p != NULL)
        workers_teardown(p, p->n);
}
