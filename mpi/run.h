/* run.h: every selected strategy of every selected job, iterated, on every rank. */
#ifndef LD_RUN_H
#define LD_RUN_H

#include <mpi.h>

#include "node.h"
#include "options.h"
#include "partition.h"

enum { LD_PCT_P50, LD_PCT_P99, LD_PCT_MAX, LD_PCTS };

/* One strategy's measurements on this rank. */
typedef struct ld_record {
    const ld_job *job;
    const ld_strategy *strategy;
    unsigned threads;         /* OS threads it runs on: carriers, workers or pool */
    int64_t bound_ns;         /* the job's lower bound, the max across ranks; 0: none */
    unsigned iterations;      /* measured ones */
    ld_metrics *metrics;      /* [iterations] */
    int64_t (*pct)[LD_PCTS];  /* [iterations]: settle latency percentiles */
    ld_figures *figures;      /* [iterations]: named figures, for jobs that report them */
    ld_trade_result *results; /* [share->n], from the last iteration */
} ld_record;

typedef struct ld_run {
    ld_record *rec;
    size_t n;
} ld_run;

/* Collective: run everything o selects over this rank's share. Every rank starts each
 * iteration together, after a barrier. Returns 0, or -1 on every rank if any failed. */
int ld_run_all(MPI_Comm comm, const ld_options *o, const ld_node *node,
               const ld_share *share, ld_run *run);

void ld_run_free(ld_run *run);

#endif
