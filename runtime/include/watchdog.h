/* watchdog.h: reports carriers that a green thread blocked, as the JVM's
 * -Djdk.tracePinnedThreads=full reports pinned virtual threads.
 *
 * A watchdog thread looks at every watched scheduler each period. A carrier that shows
 * the same running green thread and the same switch count for longer than the
 * threshold, and sleeps in the kernel (a runnable one was merely preempted), is blocked:
 * the watchdog signals it once to take a backtrace of the green thread where it sits, and
 * when the carrier moves on it prints one report:
 *
 *   loomdist: carrier 0 pinned by green thread 17 for 153.2 ms at:
 *     <backtrace of the green thread>
 *
 * The watchdog is one more OS thread for as long as it runs.
 */
#ifndef LD_WATCHDOG_H
#define LD_WATCHDOG_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "gt.h"

typedef struct ld_watchdog ld_watchdog;

/* Start watching with the given threshold; reports go to out. */
int ld_watchdog_start(ld_watchdog **out, int64_t threshold_ns, FILE *report);

/* Watch scheduler s, which runs on the calling thread, numbered `index` in reports.
 * Called on the carrier thread itself; returns a slot for ld_watchdog_forget, or
 * -ENOSPC when every slot is taken. */
int ld_watchdog_watch(ld_watchdog *w, const ld_sched *s, unsigned index);

/* Stop watching a slot, before its scheduler is destroyed; a block it was still in is
 * reported now. */
void ld_watchdog_forget(ld_watchdog *w, int slot);

/* Stop the watchdog and free it. Returns the number of reports made. */
int ld_watchdog_stop(ld_watchdog *w);

#endif
