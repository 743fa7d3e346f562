/* cpus.h: which CPUs this process may use, a rank's share of them, and pinning threads.
 *
 * Functions returning int give 0 (or 1, where said) on success and a negative errno on
 * failure.
 */
#ifndef LD_CPUS_H
#define LD_CPUS_H

#define LD_CPUS_MAX 1024

typedef struct ld_cpus {
    unsigned n;
    int id[LD_CPUS_MAX]; /* OS CPU numbers, ascending */
} ld_cpus;

/* The CPUs in the calling process's affinity mask: the union of its threads' masks, as
 * hwloc reads it. Loads a minimal hwloc topology, a few milliseconds: call it once. */
int ld_cpus_current(ld_cpus *out);

/* The CPUs the process could be bound to at all: the machine's, less what a cgroup or
 * container withholds. More than ld_cpus_current when a launcher bound the process. */
int ld_cpus_allowed(ld_cpus *out);

/* This rank's share of a node's CPUs when `local` ranks share them: local rank r gets
 * a contiguous block. With more ranks than CPUs, ranks share CPUs round-robin and the
 * function returns 1 (oversubscribed) instead of 0. */
int ld_cpus_share(const ld_cpus *node, unsigned local_rank, unsigned local, ld_cpus *out);

/* Pin the calling thread to one CPU (one system call, no hwloc topology). */
int ld_cpus_pin_self(int cpu);

/* Bind the calling thread to a set of CPUs, letting it move among them (one system
 * call). Threads it creates afterwards inherit the set. */
int ld_cpus_bind_self(const ld_cpus *cpus);

/* The CPU the calling thread is running on right now. */
int ld_cpus_running_on(void);

/* The hwloc version built against, as "2.9.0". */
const char *ld_cpus_hwloc_version(void);

#endif
