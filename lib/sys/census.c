/* census.c: a lock-free count of live strategy threads, its high-water mark, and crews
 * that keep their threads alive until all are made. */
#include "census.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Process-wide by design: see census.h. */
static atomic_int census_alive;
static atomic_int census_peak;

typedef struct census_start {
    ld_census_crew *crew;
    void *(*fn)(void *);
    void *arg;
} census_start;

void ld_census_crew_init(ld_census_crew *crew)
{
    pthread_mutex_init(&crew->lock, NULL);
    pthread_cond_init(&crew->completed, NULL);
    crew->complete = 0;
}

void ld_census_crew_complete(ld_census_crew *crew)
{
    pthread_mutex_lock(&crew->lock);
    crew->complete = 1;
    pthread_cond_broadcast(&crew->completed);
    pthread_mutex_unlock(&crew->lock);
}

void ld_census_crew_destroy(ld_census_crew *crew)
{
    pthread_cond_destroy(&crew->completed);
    pthread_mutex_destroy(&crew->lock);
}

/* Raise the mark to n unless a larger count got there first. */
static void census_raise(int n)
{
    int peak = atomic_load_explicit(&census_peak, memory_order_relaxed);
    while (n > peak && !atomic_compare_exchange_weak_explicit(&census_peak, &peak, n,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        ;
}

/* A crew's thread that is done stays, counted, until the last one has been made. */
static void census_await_crew(ld_census_crew *crew)
{
    pthread_mutex_lock(&crew->lock);
    while (!crew->complete)
        pthread_cond_wait(&crew->completed, &crew->lock);
    pthread_mutex_unlock(&crew->lock);
}

/* The counted thread's start routine: fn, then its crew's completion, then it leaves
 * the count. A strategy's threads return from fn; none calls pthread_exit. */
static void *census_main(void *arg)
{
    census_start start = *(census_start *)arg;
    free(arg);
    void *ret = start.fn(start.arg);
    if (start.crew)
        census_await_crew(start.crew);
    atomic_fetch_sub_explicit(&census_alive, 1, memory_order_relaxed);
    return ret;
}

int ld_census_spawn(ld_census_crew *crew, pthread_t *thread, const pthread_attr_t *attr,
                    void *(*fn)(void *), void *arg)
{
    census_start *start = malloc(sizeof *start);
    if (start == NULL)
        return ENOMEM;
    *start = (census_start){.crew = crew, .fn = fn, .arg = arg};
    int err = pthread_create(thread, attr, census_main, start);
    if (err) {
        free(start);
        return err;
    }
    /* The thread exists once pthread_create returns. If it has already left, the count
     * dips below the truth for a moment, and never rises above it. */
    census_raise(atomic_fetch_add_explicit(&census_alive, 1, memory_order_relaxed) + 1);
    return 0;
}

void ld_census_reset(void)
{
    atomic_store_explicit(&census_peak, atomic_load(&census_alive), memory_order_relaxed);
}

int ld_census_peak(void)
{
    return atomic_load_explicit(&census_peak, memory_order_relaxed);
}
