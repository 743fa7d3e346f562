/* options.h: loomdist's command line, parsed and validated without MPI.
 *
 * Every rank parses the same argv the same way, so every rank reaches the same verdict
 * with no communication; rank 0 alone prints it. Parsing is pure: no I/O, no globals,
 * so tests and the fuzzer call it directly.
 */
#ifndef LD_OPTIONS_H
#define LD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"

#define LD_MAX_JOBS 8
#define LD_OUTPUT_MAX 4096

enum ld_partition { LD_PARTITION_BLOCK, LD_PARTITION_CYCLIC };

typedef struct ld_options {
    uint64_t trades;
    uint64_t seed;
    uint32_t sims;
    double latency_scale;
    double fail_rate;
    double pin_fraction;
    unsigned pool_size;
    unsigned carriers; /* 0: one per CPU of the rank */
    unsigned workers;  /* 0: one per CPU of the rank */
    unsigned stack_kib;
    enum ld_stack_mode stack_mode;
    enum ld_var_kernel var_kernel;
    enum ld_partition partition;
    unsigned warmup;
    unsigned iterations;
    int quiet;
    int trace_pinning;
    double trace_threshold_ms;
    uint64_t micro_max;
    int cold_stacks;
    /* Test-only faults, hidden from --help, each aimed at one rank; UINT32_MAX: none */
    unsigned test_slow_rank; /* its settle latencies are test_slow_factor times longer */
    double test_slow_factor;
    unsigned test_overflow_rank; /* its first settle green thread overflows its stack */
    int rank;                    /* the rank these options run on, set by the driver */
    char output[LD_OUTPUT_MAX];
    /* selected[j] has bit s set when strategy s of ld_jobs[j] runs; 0: job j does not */
    uint32_t selected[LD_MAX_JOBS];
} ld_options;

enum ld_options_verdict {
    LD_OPTIONS_RUN = 0,
    LD_OPTIONS_HELP = 1,
    LD_OPTIONS_VERSION = 2,
    LD_OPTIONS_INVALID = -1, /* err holds one line saying what to fix */
};

/* Parse argv[1..argc) into o, starting from the defaults. */
enum ld_options_verdict ld_options_parse(ld_options *o, int argc, char *const *argv,
                                         char *err, size_t errlen);

/* The job config the options describe, for a rank that owns cpus. */
void ld_options_job_config(const ld_options *o, const ld_cpus *cpus, ld_job_config *cfg);

/* The --help text, and the --version line. */
void ld_options_usage(FILE *out);
void ld_options_version(FILE *out);

#endif
