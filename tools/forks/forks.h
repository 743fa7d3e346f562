/* forks.h: loomdist-forks, JMH's method around loomdist.
 *
 * Each fork is a fresh process: the launcher posix_spawns the user's command (loomdist
 * itself, or an `mpirun ... loomdist` prefix) once per fork, with --warmup,
 * --iterations and an --output of the fork's own, and waits for it. Nothing is shared
 * between forks but the command line. Once every fork has written its file, the
 * launcher reads them all (study.c) and scores each job/strategy as JMH scores a
 * benchmark (jmh.c): the mean over every measured iteration of every fork, its 99.9%
 * Student-t error, percentiles and raw data, one list per fork.
 */
#ifndef LD_FORKS_H
#define LD_FORKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LD_FORKS_NAME_MAX 128
#define LD_FORKS_PARAMS_MAX 32

/* One name = value of a benchmark's params: the strategy, then the job's result
 * options as the files' root attributes give them. */
typedef struct ld_param {
    char name[LD_FORKS_NAME_MAX];
    char value[LD_FORKS_NAME_MAX];
} ld_param;

/* One measured series: one value per iteration of each fork, reduced over ranks. */
typedef struct ld_metric {
    char name[LD_FORKS_NAME_MAX];
    char unit[LD_FORKS_NAME_MAX];
    double *raw; /* [fork * iterations + iteration] */
} ld_metric;

/* One /<job>/<strategy> group of the files. metrics[0] is the primary: ops/s, one
 * operation per iteration (1e9 / the slowest rank's wall_ns); the others are its
 * other [iterations, ranks] datasets, the largest rank's value. */
typedef struct ld_bench {
    char job[LD_FORKS_NAME_MAX];
    char strategy[LD_FORKS_NAME_MAX];
    ld_param params[LD_FORKS_PARAMS_MAX];
    size_t nparams;
    ld_metric *metrics;
    size_t nmetrics;
} ld_bench;

/* A whole study: the method, the benchmarks the first fork's file holds, and every
 * fork's process ids, one per rank, as each rank wrote its own. */
typedef struct ld_study {
    unsigned forks, warmup, iterations;
    int ranks;
    ld_bench *bench;
    size_t nbench;
    int64_t *pids; /* [fork * ranks + rank] */
} ld_study;

/* Read fork k's file (k from 0) into s, after marking it with the root attributes
 * `fork` (k + 1) and `forks`. Fork 0's file fixes the benchmarks and the ranks;
 * a later fork's that differs is refused. Returns 0, or -1 with one line in err. */
int ld_study_read_fork(ld_study *s, unsigned k, const char *path, char *err,
                       size_t errlen);

void ld_study_free(ld_study *s);

/* The study as JMH's JSON result format: a list of one object per benchmark. */
void ld_jmh_write_json(const ld_study *s, FILE *out);

/* One line per benchmark, as JMH's summary: name, mode, count, score ± error. */
void ld_jmh_print_summary(const ld_study *s, FILE *out);

#endif
