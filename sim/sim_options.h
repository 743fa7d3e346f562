/* sim_options.h: the skeleton's command line. Every figure it injects comes from a
 * real loomdist run (sim/calibrate.py reads them from the HDF5 files). */
#ifndef LD_SIM_OPTIONS_H
#define LD_SIM_OPTIONS_H

#include <stddef.h>

#include "options.h"

enum { SIM_WORK_MAX = 16 };

typedef struct sim_options {
    ld_options o;                  /* trades, seed, partition: what partition.c reads */
    double work_ns[SIM_WORK_MAX];  /* per strategy: one iteration's ns per trade held */
    double fixed_ns[SIM_WORK_MAX]; /* per strategy: one iteration\'s ns whatever the
                                      trades */
    unsigned nwork;                /* strategies */
    unsigned warmup, iterations;   /* per strategy, as --warmup and --iterations */
    unsigned first_warmup;         /* more for the first: run.c's warm-up of a baseline */
    double copy_ns;                /* rank 0's ns per byte of the trades it deals */
    double prepare_ns;             /* prepare's ns per trade held */
    unsigned pct_columns;          /* percentile columns per strategy, gathered */
    double gather_ns;              /* rank 0's ns per trade of the book, per column */
    unsigned ranks_per_node;       /* ranks that share a node and its aggregator */
    double bytes_per_trade;        /* the file's bytes per trade */
    unsigned datasets;             /* the file's datasets: one collective step each */
    double write_ns_per_byte;      /* the write's measured rate on one aggregator */
    unsigned shared_disk;          /* 1: the nodes write through one machine's disk */
    double native_slowdown;        /* native work's factor: ranks per core measured */
} sim_options;

/* Parse argv into s. Returns 0, or -1 with one line of why in err. */
int sim_options_parse(sim_options *s, int argc, char **argv, char *err, size_t errlen);

#endif
