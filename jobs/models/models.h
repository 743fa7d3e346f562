/* models.h: the models job, the four-model study's load. One operation starts --tasks
 * tasks that each wait --delay-ms, and waits until every one has finished; each
 * iteration is one operation, so the table's score is operations per second.
 *
 *   threads             --thread-cap OS threads; a task is a blocking sleep
 *   green               one green thread per task, parked until its deadline
 *   stackless           one deadline per task on the carriers' loops, its callback the
 *                       task's end: no stack, no green thread (native coroutines on
 *                       a non-blocking delay())
 *   hybrid              stackless tasks whose start and whose resumption after the
 *                       delay each run on a fresh green thread, as Kotlin's dispatcher
 *                       over virtual threads runs a coroutine's continuations
 *   stackless-blocking  stackless tasks that sleep blocking on a dispatcher of
 *                       LD_MODELS_DISPATCHER OS threads, Kotlin's Dispatchers.IO
 *
 * Limits: no operation beats the delay; P capped threads need ceil(tasks / P) rounds
 * of it. Each strategy's table row is scored against its own. The strategies
 * run under the job's resource profile (job_profile.h). The trades are not used:
 * --tasks is per rank.
 */
#ifndef LD_MODELS_H
#define LD_MODELS_H

#include <inttypes.h>

#include "deadlines.h"
#include "gt.h"
#include "job.h"
#include "job_profile.h"

/* Kotlin's Dispatchers.IO: 64 threads unless told otherwise. */
#define LD_MODELS_DISPATCHER 64

/* models' options. */
typedef struct ld_models_config {
    uint64_t tasks;      /* per operation, per rank */
    double delay_ms;     /* each task's wait */
    uint64_t thread_cap; /* threads: its OS threads */
    ld_job_profile profile;
} ld_models_config;

/* Each task's delay in ns. */
static inline uint64_t ld_models_delay_ns(const ld_models_config *mc)
{
    return (uint64_t)(mc->delay_ms * 1e6);
}

/* --- One operation on the carriers (models_carriers.c) ------------------------- */

/* What a carrier strategy does: how a task starts, and what its carrier does once
 * the task's delay is over. */
typedef struct ld_models_shape {
    ld_gt_fn task;           /* a green thread per task runs task(carrier); NULL: each
                                task's delay starts from the carrier's loop at once */
    ld_deadline_fire resume; /* fire(carrier, carrier) for a delay started with
                                ld_models_delay; NULL: no task starts one */
} ld_models_shape;

/* A carrier's part of an operation: its share of the tasks. */
typedef struct ld_models_carrier {
    const ld_models_shape *shape;
    ld_sched *sched;
    ld_deadlines *delays; /* with shape->resume: the delays in flight */
    uint64_t delay_ns;
    size_t share; /* its tasks */
    size_t left;  /* its tasks not yet done */
    int rc;       /* its first error */
} ld_models_carrier;

/* One operation: every carrier starts its share of in's tasks as shape says and runs
 * until each has called ld_models_done. Returns the first error. */
int ld_models_on_carriers(const ld_job_input *in, const ld_models_shape *shape);

/* On c's thread: start one task's delay, a deadline that fires shape->resume. */
void ld_models_delay(ld_models_carrier *c);

/* On c's thread: one of c's tasks has finished. */
void ld_models_done(ld_models_carrier *c);

/* --- The strategies ------------------------------------------------------------ */

int ld_models_threads(const ld_job_input *in);
int ld_models_green(const ld_job_input *in);
int ld_models_stackless(const ld_job_input *in);
int ld_models_hybrid(const ld_job_input *in);
int ld_models_stackless_blocking(const ld_job_input *in);

/* The OS threads of a strategy with a thread cap (threads, stackless-blocking) under
 * mc: its cap, or the tasks when fewer; 0 for the others. */
uint64_t ld_models_capped_threads(const ld_models_config *mc, const ld_strategy *s);

/* The figures a strategy with a thread cap adds, in order: "pool_start_ms",
 * "pool_stop_ms". */
extern const char *const ld_models_capped_figures[2];

/* --- Runs under a memory limit (models_apart.c, tools/models_run/main.c) ----------
 *
 * A limit is a memory cgroup's, which the OOM killer enforces on the process in the
 * group: so a run under one goes into a process of its own, loomdist-models-run, and
 * a run that outgrows it is a finding (the figure killed is 1), not the rank's end.
 * The process prints two lines: what it was granted, then what it measured (its
 * metrics in ld_metrics' order, the group's peak in bytes, the strategy's figures,
 * and the strategy's reason when rc is not 0). */
#define LD_MODELS_READY_LINE                                                             \
    "ready cpus=%u cpus_asked=%u mem_limit=%" PRIu64 " mem_asked=%" PRIu64 " clamped=%u"
#define LD_MODELS_DONE_LINE "done rc=%d metrics="

/* The job's measure_apart hook: runs under a memory limit go to loomdist-models-run;
 * the others are LD_JOB_MEASURE_HERE. */
int ld_models_measure_apart(const ld_job_config *cfg, const ld_strategy *s, ld_metrics *m,
                            ld_figures *figures);

extern const ld_job ld_models_job;

#endif
