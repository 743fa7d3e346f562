/* resources.h: what a run will need, checked against what the node has, before any
 * work starts, so a run too big for the machine fails at once with the limit named,
 * instead of swapping or being killed half-way. */
#ifndef LD_RESOURCES_H
#define LD_RESOURCES_H

#include <mpi.h>

#include "options.h"

/* Collective, before the book: the resident memory the selected jobs need on each
 * node, each rank for its share of the trades (ld_partition_count) or the job's own
 * tasks, against the node's MemAvailable and the cgroup's memory.max. Returns 0, or -1
 * on every rank with one line in err naming the option that sets the tasks. */
int ld_resources_check(MPI_Comm comm, const ld_options *o, char *err, size_t errlen);

/* Collective, before any work, under the CPUs this rank may use: each selected
 * strategy's OS threads, times the ranks on the node, against what the kernel lets
 * run (pid_max, threads-max, ulimit -u); and each selected job's memory limit
 * (job.h's mem_floor) against the floor its heaviest selected strategy needs before
 * its first task. Returns 0, or -1 on every rank with one line in err naming the
 * limit. */
int ld_resources_limits(MPI_Comm comm, const ld_options *o, char *err, size_t errlen);

/* vm.max_map_count, or -1 when it cannot be read. */
long ld_resources_max_map_count(void);

#endif
