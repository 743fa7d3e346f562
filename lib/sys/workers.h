/* workers.h: a fixed set of OS worker threads, worker w pinned to cpus[w].
 *
 * ld_workers_run hands task indices 0..ntasks-1 out one at a time from a shared atomic
 * counter and returns when all have run. The workers are created once and reused
 * across runs; between runs they sleep on a condition variable. No global state: all
 * of it lives in the ld_workers. Functions returning int give 0 or a negative errno.
 */
#ifndef LD_WORKERS_H
#define LD_WORKERS_H

#include <stddef.h>

#include "cpus.h"

typedef struct ld_workers ld_workers;

/* Task callback: run task `index` on worker `worker` (0-based). */
typedef void (*ld_workers_task)(void *ctx, size_t index, unsigned worker);

/* One worker per CPU in cpus, each pinned to its CPU before it takes any task. Returns
 * once every worker is pinned; a CPU that cannot be pinned fails the whole set. */
int ld_workers_create(ld_workers **out, const ld_cpus *cpus);

/* Run fn(ctx, i, w) for every i in [0, ntasks), blocking until all are done. One run
 * at a time: a call while another is in progress returns -EBUSY. */
int ld_workers_run(ld_workers *p, size_t ntasks, ld_workers_task fn, void *ctx);

unsigned ld_workers_count(const ld_workers *p);

/* The CPU worker w is pinned to. */
int ld_workers_cpu(const ld_workers *p, unsigned w);

/* Stop and join the workers. */
void ld_workers_destroy(ld_workers *p);

#endif
