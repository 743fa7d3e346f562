/* job.h: a job is a workload with named strategies; the driver runs them all alike.
 *
 * A job prepares per-trade state once (untimed), then each strategy runs over the
 * rank's trades and fills one ld_trade_result per trade. The harness (ld_job_measure)
 * times the strategy and samples its threads, memory and CPU. Jobs know no MPI.
 *
 * Adding a strategy is one file with its run function plus one entry in its job's table;
 * adding a job is one file with its table plus one entry in registry.c.
 */
#ifndef LD_JOB_H
#define LD_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "book.h"
#include "cpus.h"
#include "gt.h"
#include "metrics.h"
#include "var_kernel.h"

/* Everything a strategy may read. Counts of 0 mean "one per CPU of the rank". */
typedef struct ld_job_config {
    uint64_t seed;
    uint32_t sims;        /* var: simulations per trade */
    double latency_scale; /* settle: multiplies every latency */
    double fail_rate;     /* settle: failure probability of each check */
    double pin_fraction;  /* settle: share of trades that take the monitor */
    unsigned pool_size;   /* settle threads: OS threads in the pool */
    unsigned carriers;    /* green strategies: carrier threads */
    unsigned workers;     /* var pool and steal: worker threads */
    size_t stack_size;    /* green threads: usable stack bytes */
    enum ld_stack_mode stack_mode;
    enum ld_var_kernel var_kernel;
    int64_t trace_pinning_ns; /* report carriers blocked longer than this; 0: off */
    size_t micro_max;         /* micro: most green threads one figure uses */
    int cold_stacks;          /* green strategies: no stacks reserved before the clock */
    int test_overflow;        /* tests only: settle's first green thread overflows */
    ld_stack_depot *stacks; /* green strategies: stacks shared by every run; may be NULL */
    const ld_cpus *cpus;   /* the CPUs this rank owns */
} ld_job_config;

/* One trade's outcome. Each job fills the fields it defines and leaves the rest 0. */
typedef struct ld_trade_result {
    int64_t latency_ns;  /* settle: from the strategy's start to the trade's settlement */
    double var;          /* var: 95% one-day VaR in dollars */
    uint8_t status;      /* settle: enum ld_settle_status */
    int8_t failed_check; /* settle: index of the first failed call, -1 for none */
} ld_trade_result;

/* A named scalar a strategy measured, for jobs whose results are not per trade (micro):
 * "green_ns" 12.5 "ns". Names and units are string literals, the same on every rank. */
typedef struct ld_figure {
    const char *name;
    double value;
    const char *unit;
} ld_figure;

#define LD_FIGURES_MAX 16

typedef struct ld_figures {
    ld_figure v[LD_FIGURES_MAX];
    size_t n;
} ld_figures;

/* Append a figure; past LD_FIGURES_MAX it is dropped and -ENOSPC returned. */
int ld_figure_add(ld_figures *f, const char *name, double value, const char *unit);

/* What a strategy is handed: the trades, the job's prepared state, t0, the ld_now_ns()
 * at which the timed run began, and where to put any named figures. */
typedef struct ld_job_input {
    const ld_job_config *cfg;
    const ld_trade *trades;
    size_t n;
    const void *prepared;
    int64_t t0;
    ld_figures *figures;
} ld_job_input;

typedef int (*ld_strategy_fn)(const ld_job_input *in, ld_trade_result *out);

/* Which OS threads a strategy runs on, for reports. */
enum ld_threading {
    LD_ON_ONE,      /* the calling thread */
    LD_ON_CARRIERS, /* green threads on --carriers carrier threads */
    LD_ON_LOOPS,    /* libuv loops on --carriers carrier threads, no green threads */
    LD_ON_WORKERS,  /* --workers pinned workers */
    LD_ON_POOL,     /* --pool-size OS threads */
};

typedef struct ld_strategy {
    const char *name;
    const char *summary; /* one line for --help */
    ld_strategy_fn run;
    enum ld_threading threading;
} ld_strategy;

/* Which fields of ld_trade_result a job fills, so output code needs no job names. */
enum ld_result_fields {
    LD_FIELDS_SETTLE = 1, /* latency_ns, status, failed_check */
    LD_FIELDS_VAR = 2,    /* var */
};

typedef struct ld_job {
    const char *name;
    const char *summary;
    unsigned fields;      /* enum ld_result_fields */
    const char *baseline; /* the strategy the others' speedup is taken over, or NULL */
    int opt_in;           /* runs only when --jobs names it */
    const ld_strategy *strategies;
    size_t nstrategies;
    /* Untimed set-up over the rank's trades; *prepared is passed to every strategy.
     * *bound_ns receives the job's physical lower bound on wall time, or 0. */
    int (*prepare)(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                   void **prepared, int64_t *bound_ns);
    void (*release)(void *prepared);
    /* The resident bytes its heaviest strategy needs for n tasks, for the check made
     * before a run; NULL when that is small. */
    uint64_t (*resident_bytes)(const ld_job_config *cfg, size_t n);
} ld_job;

/* Every job, in the order the driver runs them. */
extern const ld_job *const ld_jobs[];
extern const size_t ld_njobs;

const ld_job *ld_job_find(const char *name);
const ld_strategy *ld_job_strategy(const ld_job *job, const char *name);

/* The OS threads a strategy will run on under cfg: carriers, workers or pool. */
unsigned ld_job_threads(const ld_job_config *cfg, const ld_strategy *s);

/* The CPUs a worker pool runs on: the rank's, cut to --workers when that is smaller,
 * or repeated round-robin when it is larger. */
void ld_job_worker_cpus(const ld_job_config *cfg, ld_cpus *out);

/* Run one strategy once, measured: metrics cover exactly the run, and figures (which
 * may be NULL) receive whatever named figures it reports. A carrier strategy finds
 * cfg->stacks holding a stack per task, reserved before the clock, unless
 * cfg->cold_stacks. */
int ld_job_measure(const ld_job *job, const ld_strategy *s, const ld_job_config *cfg,
                   const ld_trade *trades, size_t n, const void *prepared,
                   ld_trade_result *out, ld_metrics *m, ld_figures *figures);

#endif
