/* mixed.h: settle and VaR at once on each rank, over the same trades.
 *
 * Every trade settles through a green thread of its own (settle's plan, drawn from its
 * LD_STREAM_SETTLE stream) and has its VaR computed (var's kernel, on its LD_STREAM_VAR
 * stream), so its status and VaR are bit for bit settle's and var's. The strategies
 * differ in where the VaR runs while the trades settle:
 *
 *   split           settle's carriers on the first --settle-cpus CPUs of the rank, VaR
 *                   on a pool pinned to the others: the design card's layout
 *   shared          VaR as one green thread per trade on settle's carriers, each run to
 *                   completion, as Loom runs them
 *   shared-yield    the same, each VaR yielding every --yield-every simulations
 *   oversubscribed  carriers and a pool on every CPU of the rank, the kernel arbitrating
 *
 * One run of a strategy is three phases, each with its own clock: settle alone (green
 * threads on carriers on every CPU of the rank), VaR alone (the pool on every CPU),
 * then both together in the strategy's layout. The per-task columns are the
 * together phase's; the figures set it against the two alone phases of the same run.
 */
#ifndef LD_MIXED_H
#define LD_MIXED_H

#include "cpus.h"
#include "hist.h"
#include "job.h"
#include "settle.h"
#include "var.h"

/* mixed's options: settle's and var's that change a result, declared alike so a value
 * given once goes to all three jobs, and its own. */
typedef struct ld_mixed_config {
    double latency_scale;
    double fail_rate;
    uint64_t sims;
    int kernel;           /* enum ld_var_kernel */
    uint64_t yield_every; /* shared-yield: simulations between two yields */
    uint64_t settle_cpus; /* split: the CPUs settle's carriers get */
} ld_mixed_config;

/* One trade's outcome in the together phase. */
typedef struct ld_mixed_result {
    int64_t latency_ns; /* from the phase's start to the trade's settlement */
    double var;         /* 95% one-day VaR in dollars */
    uint8_t status;     /* enum ld_settle_status */
    int8_t failed_check;
} ld_mixed_result;

/* What prepare leaves: settle's own prepared plans and the configs the two halves run
 * under. */
typedef struct ld_mixed_prepared {
    ld_settle_config settle;
    ld_var_config var;
    void *plans; /* ld_settle_job's prepared state */
    int64_t critical_path_ns;
} ld_mixed_prepared;

/* Where a phase puts the VaR. */
enum ld_mixed_var { LD_MIXED_VAR_NONE, LD_MIXED_VAR_POOL, LD_MIXED_VAR_GREEN };

/* One phase: what runs where, and what it measured. Times are from t0. */
typedef struct ld_mixed_phase {
    int settle_on;                     /* trades settle on the carriers */
    enum ld_mixed_var var;             /* and their VaR goes here */
    uint64_t yield_every;              /* LD_MIXED_VAR_GREEN: 0, run to completion */
    ld_job_config settle_cfg, var_cfg; /* each half's config, its CPUs below */
    ld_cpus settle_cpus, var_cpus;
    ld_job_input settle_in, var_in; /* each half's results, and t0 */
    double *arena;                  /* shared-yield: sims doubles per trade */
    int64_t *var_done_ns;           /* per trade: when its VaR was done */
    ld_hist hold;                   /* green VaR: each stretch it held its carrier */
    ld_hist late;                   /* each settle call's wake past its deadline */
} ld_mixed_phase;

/* Run the phase's carriers until their green threads are done: the settle trades if
 * settle_on, and under LD_MIXED_VAR_GREEN the VaR trades. */
int ld_mixed_carriers(ld_mixed_phase *p);

/* Run the phase from a clock of its own (t0 of both inputs): under LD_MIXED_VAR_POOL
 * the VaR on a pool pinned to var_cpus, made before the clock, while the carriers run
 * beside it on a thread of their own; otherwise the carriers alone. */
int ld_mixed_phase_run(ld_mixed_phase *p);

/* The strategies. */
int ld_mixed_split(const ld_job_input *in);
int ld_mixed_shared(const ld_job_input *in);
int ld_mixed_shared_yield(const ld_job_input *in);
int ld_mixed_oversubscribed(const ld_job_input *in);

extern const ld_job ld_mixed_job;

#endif
