/* census.h: the OS threads a strategy made that are alive at once, counted, not sampled.
 *
 * The sampler in metrics.h reads the process's thread count every millisecond, and a
 * short run's threads can come and go between two reads. So the places that make a
 * strategy's OS threads (settle's threads, the carriers, the pinned workers) start them
 * with ld_census_spawn. It counts each thread from the return of its pthread_create to
 * the return of its start routine, both inside the thread's life, and keeps the
 * high-water mark of that count. The mark can therefore be low, never high: at that
 * moment at least that many of these threads existed. (Counting from the start
 * routine's first instruction instead would miss a thread created but not yet run.)
 *
 * A crew is a set of threads started together that all stay alive until it is
 * complete: one whose start routine returns early waits, still counted, for
 * ld_census_crew_complete. A crew of N threads then has N at once however short the
 * run, as a JVM's pool keeps its threads until shutdown.
 *
 * The count is process-wide, the one mutable state outside a scheduler here, because
 * what it measures is process-wide: the process's threads, as /proc/self/status counts
 * them, whichever code made them. One strategy is measured at a time; a probe resets the
 * mark when it starts (ld_census_reset) and reads it when it stops (ld_census_peak).
 * The count and the mark are lock-free; a crew has a lock of its own.
 */
#ifndef LD_CENSUS_H
#define LD_CENSUS_H

#include <pthread.h>

typedef struct ld_census_crew {
    pthread_mutex_t lock;
    pthread_cond_t completed;
    int complete; /* no more threads will join the crew */
} ld_census_crew;

void ld_census_crew_init(ld_census_crew *crew);

/* No more threads will be spawned into the crew: the ones waiting may return. Call it
 * before joining them, also when a spawn has failed. */
void ld_census_crew_complete(ld_census_crew *crew);

/* After every thread of the crew is joined. */
void ld_census_crew_destroy(ld_census_crew *crew);

/* pthread_create, with the thread counted until fn(arg) has returned and, when crew is
 * not NULL, the crew is complete. Returns 0 or a positive errno, as pthread_create
 * does; join the thread with pthread_join as usual. */
int ld_census_spawn(ld_census_crew *crew, pthread_t *thread, const pthread_attr_t *attr,
                    void *(*fn)(void *), void *arg);

/* Start a new high-water mark from the number of counted threads alive now. */
void ld_census_reset(void);

/* The most counted threads alive at once since the last reset. */
int ld_census_peak(void);

#endif
