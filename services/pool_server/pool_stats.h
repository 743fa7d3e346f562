/* pool_stats.h: what the pooling server counts in a phase, and the one text line that
 * carries it from the server's process to the rank that drives it.
 *
 * The line is "key=value" pairs, one space apart, in the order of the fields below;
 * a parse takes the keys in any order and fails on one it does not know, so the two
 * sides cannot drift apart silently.
 */
#ifndef LD_POOL_STATS_H
#define LD_POOL_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ld_pool_stats {
    double seconds;          /* the phase's length so far */
    uint64_t requests;       /* answered 200 to a client still there */
    uint64_t errors;         /* answered 502 (the backend failed) or to a client gone */
    uint64_t latency_p50_ns; /* arrival to answer, the server's side */
    uint64_t latency_p99_ns;
    uint64_t latency_max_ns;
    uint64_t peak_open; /* client connections open at once, all carriers */
    /* The green threads' stacks (gt_stats.h), all carriers. */
    uint64_t freezes;
    uint64_t chunk_allocs, chunk_reuses, chunk_grows, chunk_trims;
    uint64_t stack_allocated;             /* bytes, in the phase */
    uint64_t stack_resident;              /* bytes, at its end */
    uint64_t capacity_mean, capacity_p99; /* bytes, at each freeze */
    uint64_t frozen_mean, frozen_p99;     /* bytes in use, at each freeze */
    /* The process. */
    uint64_t minor_faults, major_faults; /* in the phase */
    uint64_t rss_peak;                   /* bytes, VmHWM since the phase began */
    /* Its memory group, when it has one (profile.h). */
    uint64_t cgroup_peak; /* bytes, since the server started */
    uint64_t limit_hits, oom, oom_kills;
} ld_pool_stats;

/* The line for s, without a newline, into buf[0..size): its length, or -ENOSPC. */
int ld_pool_stats_format(const ld_pool_stats *s, char *buf, size_t size);

/* s from such a line; -EINVAL for a key it does not know or a value that is no
 * number. */
int ld_pool_stats_parse(const char *line, ld_pool_stats *s);

/* The calling process's page faults so far and its VmHWM, into s. */
void ld_pool_stats_process(ld_pool_stats *s);

/* Start the process's VmHWM afresh (clear_refs), for a new phase. */
void ld_pool_stats_reset_peak(void);

#endif
