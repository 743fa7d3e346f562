/* metrics.h: what one strategy run cost the process, measured, never assumed.
 *
 * A probe resets the kernel's peak-RSS mark (VmHWM) and samples the thread count on a
 * sampler thread of its own, which it leaves out of the count. Everything the process
 * runs meanwhile is counted, MPI's own threads included. A sample can miss threads that
 * live shorter than its period, so the probe also resets and reads the census
 * (census.h) of the threads the strategy made, and reports whichever is larger.
 */
#ifndef LD_METRICS_H
#define LD_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ld_metrics {
    int64_t wall_ns;
    int64_t peak_threads; /* OS threads at once: max(sampled, 1 + census), no sampler */
    int64_t peak_rss_kib; /* VmHWM after a reset at the start */
    int64_t utime_us;
    int64_t stime_us;
    int64_t nvcsw;  /* voluntary context switches */
    int64_t nivcsw; /* involuntary context switches */
} ld_metrics;

#define LD_METRICS_N 7

/* Output code walks the fields as an array of int64_t; this keeps that true. */
_Static_assert(sizeof(ld_metrics) == LD_METRICS_N * sizeof(int64_t),
               "ld_metrics is all int64_t");

/* Each field's name and unit, in the struct's order: the one place that order is
 * written down for the file and the table. */
typedef struct ld_metric_desc {
    const char *name;
    const char *unit;
    const char *doc;
} ld_metric_desc;

extern const ld_metric_desc ld_metrics_fields[LD_METRICS_N];

/* Field k of m, walked as the array of int64_t it is. */
static inline int64_t ld_metrics_get(const ld_metrics *m, size_t k)
{
    return ((const int64_t *)(const void *)m)[k];
}

typedef struct ld_probe ld_probe;

/* Monotonic time in nanoseconds. */
int64_t ld_now_ns(void);

/* Start measuring: reset VmHWM, take rusage, start the sampler (period in µs). */
int ld_probe_start(ld_probe **out, unsigned period_us);

/* Stop the sampler and fill m with what happened since ld_probe_start. Frees p. */
int ld_probe_stop(ld_probe *p, ld_metrics *m);

/* The process's current thread count (from /proc/self/stat) and resident set (from
 * /proc/self/status). */
int ld_proc_threads(void);
int64_t ld_proc_rss_kib(void);

/* The memory mappings the process holds now (lines of /proc/self/maps), or -1. */
long ld_proc_maps(void);

/* Value i of the n that ld_percentiles reads, ctx being its caller's. */
typedef int64_t (*ld_value_fn)(const void *ctx, size_t i);

/* The nearest-rank median, 99th percentile and maximum of n values read through get
 * (all 0 when n is 0), exactly, in a few passes over them and without a copy: 0, or
 * -ENOMEM (out is then all 0). */
typedef struct ld_pct3 {
    int64_t p50, p99, max;
} ld_pct3;
int ld_percentiles(size_t n, ld_value_fn get, const void *ctx, ld_pct3 *out);

#endif
