/* census.c: a lock-free count of live strategy threads and its high-water mark. */
#include "census.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Process-wide by design: see census.h. */
static atomic_int census_alive;
static atomic_int census_peak;

typedef struct census_start {
    void *(*fn)(void *);
    void *arg;
} census_start;

/* Raise the mark to n unless a larger count got there first. */
static void census_raise(int n)
{
    int peak = atomic_load_explicit(&census_peak, memory_order_relaxed);
    while (n > peak && !atomic_compare_exchange_weak_explicit(&census_peak, &peak, n,
                                                              memory_order_relaxed,
                                                              memory_order_relaxed))
        ;
}

/* Leaving the count in a cleanup handler also covers a thread that calls pthread_exit
 * or is cancelled, so the count never keeps a thread that is gone. */
static void census_leave(void *unused)
{
    (void)unused;
    atomic_fetch_sub_explicit(&census_alive, 1, memory_order_relaxed);
}

/* The counted thread's start routine: it leaves the count when fn returns. */
static void *census_main(void *arg)
{
    census_start start = *(census_start *)arg;
    free(arg);
    void *ret;
    pthread_cleanup_push(census_leave, NULL);
    ret = start.fn(start.arg);
    pthread_cleanup_pop(1);
    return ret;
}

int ld_census_spawn(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                    void *arg)
{
    census_start *start = malloc(sizeof *start);
    if (start == NULL)
        return ENOMEM;
    *start = (census_start){.fn = fn, .arg = arg};
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
