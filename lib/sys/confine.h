/* confine.h: a resource profile, the machine a run is given for a while: a number of
 * CPUs and a memory limit, granted to the calling process and then taken back.
 *
 * CPUs are an affinity mask: the first N of the CPUs the caller offers (its rank's).
 * The calling thread is bound to them, so threads it makes afterwards inherit them;
 * whoever sizes carriers or workers sizes them from the granted set.
 *
 * Memory is a real cgroup limit. A child of the process's own memory cgroup,
 * loomdist-<pid>, gets memory.limit_in_bytes (cgroup v1) or memory.max (v2), and the
 * process is moved into it; past the limit the kernel reclaims, then the OOM killer
 * ends the process. A cgroup does not take along what was charged before the move, so
 * the limit bounds what the process allocates while inside. Leaving moves the process
 * back and removes the group.
 *
 * A profile the machine cannot honour is clamped, never silently: more CPUs than
 * offered grants all of them; more memory than the machine or the enclosing group
 * has grants that much; where no group can be made (no memory controller, no
 * permission) there is no limit. Each sets its bit in `clamped`.
 *
 * LOOMDIST_CGROUP=v1 or =v2 in the environment tries that cgroup version alone, and
 * =none no group at all, to try other machines' paths on any.
 *
 * One profile at a time per process; enter and leave on the same thread. Functions
 * return 0 or a negative errno.
 */
#ifndef LD_CONFINE_H
#define LD_CONFINE_H

#include <stdint.h>

#include "cpus.h"

enum ld_confine_clamp {
    LD_CONFINE_CLAMPED_CPUS = 1,   /* fewer CPUs than asked */
    LD_CONFINE_CLAMPED_MEMORY = 2, /* a lower memory limit than asked, or none */
};

#define LD_CONFINE_PATH 512

typedef struct ld_confine {
    unsigned cpus_asked; /* 0: every CPU offered */
    uint64_t mem_asked;  /* bytes; 0: no limit */
    ld_cpus cpus;        /* granted */
    uint64_t mem_limit;  /* granted, in bytes; 0: none */
    unsigned clamped;    /* enum ld_confine_clamp bits */
    int cgroup_version;  /* of the group entered: 1 or 2; 0: none */
    /* private: what leave undoes */
    ld_cpus saved;               /* the calling thread's mask before */
    char group[LD_CONFINE_PATH]; /* the child group's folder */
    char home[LD_CONFINE_PATH];  /* the group the process came from */
} ld_confine;

/* Grant `cpus` of the `offered` CPUs (0: all) and `mem_bytes` of memory (0: no
 * limit), clamped as above. On an error (the calling thread's mask refused) nothing
 * is left changed; a cgroup that cannot be made or entered is no error, only a clamp. */
int ld_confine_enter(ld_confine *p, const ld_cpus *offered, unsigned cpus,
                     uint64_t mem_bytes);

/* The most memory charged to the group since enter, in bytes; 0 without a group. */
uint64_t ld_confine_mem_peak(const ld_confine *p);

/* What happened at the memory limit, as the group counts it. */
typedef struct ld_confine_events {
    uint64_t limit_hits; /* charges that met the limit: v1 memory.failcnt, v2 "max" */
    uint64_t oom; /* the group out of memory after reclaim: v1 under_oom, v2 "oom" */
    uint64_t oom_kills; /* processes the OOM killer ended in it: "oom_kill" */
} ld_confine_events;

/* The group's counters since enter; all 0 without a group. */
void ld_confine_mem_events(const ld_confine *p, ld_confine_events *out);

/* For the parent of a process that entered a profile and died in it (the OOM killer
 * ends a process before it can leave): its group's peak and counters, then the group
 * removed. -ENOENT when pid left no group. */
int ld_confine_reap(long pid, ld_confine_events *events, uint64_t *peak);

/* Give the profile back: the thread's mask as it was, the process in its own group
 * again, the child group removed. Returns the first error; every step is tried. */
int ld_confine_leave(ld_confine *p);

#endif
