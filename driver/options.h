/* options.h: loomdist's command line, parsed and validated without MPI.
 *
 * The driver declares its own options (trades, seed, carriers, output...) in the same
 * ld_opt form as the jobs declare theirs, and one parser reads them all: a job's
 * option sets that job's config struct, and is refused when the job is not selected.
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

#define LD_OUTPUT_MAX 4096

enum ld_partition { LD_PARTITION_BLOCK, LD_PARTITION_CYCLIC, LD_PARTITION_RANGES };

typedef struct ld_options {
    uint64_t trades;
    uint64_t seed;
    uint64_t carriers; /* 0: one per CPU of the rank */
    uint64_t workers;  /* 0: one per CPU of the rank */
    uint64_t stack_kib;
    int stack_mode; /* enum ld_stack_mode */
    int partition;  /* enum ld_partition */
    uint64_t warmup;
    uint64_t iterations;
    int quiet;
    int trace_pinning;
    double trace_threshold_ms;
    int cold_stacks;
    /* Test-only faults, hidden from --help, each aimed at one rank; UINT32_MAX: none */
    uint64_t test_slow_rank; /* its timed waits are test_slow_factor times longer */
    double test_slow_factor;
    uint64_t test_overflow_rank; /* its job's first green thread overflows its stack */
    int rank;                    /* the rank these options run on, set by the driver */
    char output[LD_OUTPUT_MAX];
    /* selected[j] has bit s set when strategy s of ld_jobs[j] runs; 0: job j does not */
    uint32_t selected[LD_MAX_JOBS];
    /* job_config[j]: ld_jobs[j]'s own config struct, as its options left it */
    _Alignas(16) unsigned char job_config[LD_MAX_JOBS][LD_JOB_CONFIG_MAX];
} ld_options;

enum ld_options_verdict {
    LD_OPTIONS_RUN = 0,
    LD_OPTIONS_HELP = 1,
    LD_OPTIONS_VERSION = 2,
    LD_OPTIONS_SCHEMA = 3,
    LD_OPTIONS_INVALID = -1, /* err holds one line saying what to fix */
};

/* Parse argv[1..argc) into o, starting from the defaults. */
enum ld_options_verdict ld_options_parse(ld_options *o, int argc, char *const *argv,
                                         char *err, size_t errlen);

/* The driver's own options, in the form jobs declare theirs; values live in
 * ld_options. */
const ld_opt *ld_options_common(size_t *n);

/* The config of job j under these options, for a rank that owns cpus. */
void ld_options_job_config(const ld_options *o, size_t j, const ld_cpus *cpus,
                           ld_job_config *cfg);

/* The --help text, and the --version line. */
void ld_options_usage(FILE *out);
void ld_options_version(FILE *out);

#endif
