/* micro.h: the micro job, the runtime's own costs against what it replaces.
 *
 * Each strategy is one family of named figures, measured in one run against its
 * reference, so their ratio holds however noisy the machine is:
 *
 *   switch  one green-thread switch (a yield from one thread to the next) against
 *           ucontext's swapcontext, and the same hand-over in copy mode
 *   spawn   spawn plus join of an empty green thread, stacks cached, against
 *           pthread_create plus pthread_join
 *   park    CPU per park and wake through a timer at 1, 10^3 and 10^6 sleepers: the
 *           timing wheel against a libuv timer per thread (the heap)
 *   memory  resident memory per parked green thread, over 10^5 of them, with stacks
 *           of their own and in copy mode
 *   task    one green thread's whole life (spawn, first run, park on a deadline, wake,
 *           return, join) against the same life for an OS thread: ns and CPU ns per
 *           task, and instructions and cycles where the machine exposes counters
 *
 * The trades are not used. --micro-max caps the thread counts of park and memory.
 */
#ifndef LD_MICRO_H
#define LD_MICRO_H

#include "gt.h"
#include "job.h"

/* micro's options. */
typedef struct ld_micro_config {
    uint64_t micro_max; /* the most green threads one figure uses */
} ld_micro_config;

/* The --micro-max cap on a figure's thread count. */
static inline size_t ld_micro_max(const ld_job_input *in)
{
    const ld_micro_config *mc = in->cfg->opts;
    return (size_t)mc->micro_max;
}

int ld_micro_switch(const ld_job_input *in);
int ld_micro_spawn(const ld_job_input *in);
int ld_micro_park(const ld_job_input *in);
int ld_micro_memory(const ld_job_input *in);
int ld_micro_task(const ld_job_input *in);

/* CPU time of the calling thread, in ns. */
int64_t ld_micro_cpu_ns(void);

/* Hardware counters of the calling thread (micro_counters.c): instructions and cycles
 * spent in user space. Open returns 0, or a negative errno where the machine exposes
 * no such counters (-ENOENT, -EOPNOTSUPP) or refuses them (-EACCES); a closed set
 * reads zeros. With inherit, threads created after the open count too. */
typedef struct ld_micro_counters {
    int fd[2];
} ld_micro_counters;
int ld_micro_counters_open(ld_micro_counters *c, int inherit);
void ld_micro_counters_read(const ld_micro_counters *c, uint64_t *instructions,
                            uint64_t *cycles);
void ld_micro_counters_close(ld_micro_counters *c);

/* Run fn(s, arg) as a green thread on a scheduler s of its own on this thread, until
 * every green thread is done. */
typedef void (*ld_micro_body)(ld_sched *s, void *arg);
int ld_micro_run_green(const ld_sched_config *cfg, ld_micro_body fn, void *arg);

extern const ld_job ld_micro_job;

#endif
