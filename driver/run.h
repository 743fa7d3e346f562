/* run.h: every selected strategy of every selected job, iterated, on every rank. */
#ifndef LD_RUN_H
#define LD_RUN_H

#include <mpi.h>

#include "metrics.h"
#include "node.h"
#include "options.h"
#include "partition.h"

enum { LD_PCT_P50, LD_PCT_P99, LD_PCT_MAX, LD_PCTS };

/* The percentiles of n values read through get into pct, in the order above; all 0
 * when there was no memory to find them. */
static inline void ld_pcts_of(size_t n, ld_value_fn get, const void *ctx,
                              int64_t pct[LD_PCTS])
{
    ld_pct3 p;
    ld_percentiles(n, get, ctx, &p);
    pct[LD_PCT_P50] = p.p50;
    pct[LD_PCT_P99] = p.p99;
    pct[LD_PCT_MAX] = p.max;
}

/* Value i of an array of int64_t, for ld_pcts_of. */
static inline int64_t ld_i64_at(const void *v, size_t i)
{
    return ((const int64_t *)v)[i];
}

/* One strategy's measurements on this rank. */
typedef struct ld_record {
    const ld_job *job;
    const ld_strategy *strategy;
    unsigned threads;        /* OS threads it runs on: carriers, workers or its own */
    int64_t bound_ns;        /* the job's lower bound, the max across ranks; 0: none */
    unsigned iterations;     /* measured ones */
    ld_metrics *metrics;     /* [iterations] */
    size_t npct;             /* the job's LD_COL_PERCENTILES columns */
    int64_t (*pct)[LD_PCTS]; /* [iterations * npct]: their percentiles on this rank */
    ld_figures *figures;     /* [iterations]: named figures, for jobs that report them,
                                on every rank in the order of rank 0's first iteration
                                (matched by name once the strategy has run) */
    void *results; /* [share->n] of the job's result struct, from the last iteration */
} ld_record;

/* The percentiles of percentile column k in measured iteration it. */
static inline int64_t *ld_record_pct(const ld_record *r, unsigned it, size_t k)
{
    return r->pct[(size_t)it * r->npct + k];
}

/* The lower bound of r's strategy: its job's, or its own where the job says so. */
static inline int64_t ld_record_bound(const ld_options *o, const ld_record *r)
{
    return ld_job_bound(r->job, o->job_config[ld_job_index(r->job)], r->strategy,
                        r->bound_ns);
}

typedef struct ld_run {
    ld_record *rec;
    size_t n;
    int64_t prepare_ns; /* this rank's shares and prepares, untimed */
} ld_run;

/* Collective: run everything o selects over this rank's share. Every rank starts each
 * iteration together, after a barrier. Returns 0, or -1 on every rank if any failed. */
int ld_run_all(MPI_Comm comm, const ld_options *o, const ld_node *node,
               const ld_share *share, ld_run *run);

void ld_run_free(ld_run *run);

#endif
