/* settle.h: what every settle strategy shares: the five calls and each trade's plan.
 *
 * A trade's plan is drawn from its own LD_STREAM_SETTLE stream before any strategy
 * runs: the latency of each call, the outcome of each check, and whether it takes the
 * monitor. Strategies differ only in how they wait out the latencies.
 */
#ifndef LD_SETTLE_H
#define LD_SETTLE_H

#include "job.h"

enum ld_settle_status { LD_SETTLED = 0, LD_FAILED = 1 };

enum ld_settle_call {
    LD_CALL_FETCH = 0,        /* fetch trade (database), 1-5 ms */
    LD_CALL_COUNTERPARTY = 1, /* validate counterparty, 60-160 ms: a check */
    LD_CALL_BUYING_POWER = 2, /* check buying power, 40-120 ms: a check */
    LD_CALL_SHARES = 3, /* confirm share availability, SELL only, 50-140 ms: a check */
    LD_CALL_UPDATE = 4, /* update status (database), 1-5 ms */
    LD_SETTLE_CALLS = 5,
};

/* settle's options (--latency-scale, --fail-rate, --pin-fraction, --os-threads). */
typedef struct ld_settle_config {
    double latency_scale; /* multiplies every latency */
    double fail_rate;     /* failure probability of each check */
    double pin_fraction;  /* share of trades that take the monitor */
    uint64_t os_threads;  /* threads: OS threads in the pool */
} ld_settle_config;

/* One trade's outcome: the per-task columns settle declares. */
typedef struct ld_settle_result {
    int64_t latency_ns;  /* from the strategy's start to the trade's settlement */
    uint8_t status;      /* enum ld_settle_status */
    int8_t failed_check; /* index of the first failed call, -1 for none */
} ld_settle_result;

typedef struct ld_settle_plan {
    int64_t latency_ns[LD_SETTLE_CALLS]; /* scaled; 0 for a call that is not made */
    double pin_draw; /* the trade takes the monitor if < pin_fraction */
    uint8_t status;
    int8_t failed_check;
} ld_settle_plan;

/* The validation calls, the ones a monitor wraps in green-pinned and green-monitor. */
static inline int ld_settle_in_monitor(int call)
{
    return call == LD_CALL_COUNTERPARTY || call == LD_CALL_BUYING_POWER;
}

/* Whether trade i takes the monitor under this configuration. */
static inline int ld_settle_pinned(const ld_job_input *in, size_t i)
{
    const ld_settle_plan *plan = (const ld_settle_plan *)in->prepared + i;
    const ld_settle_config *sc = in->cfg->opts;
    return plan->pin_draw < sc->pin_fraction;
}

/* Draw trade t's plan from its own LD_STREAM_SETTLE stream under cfg (its seed, its
 * slow_factor, and its opts, an ld_settle_config): what every strategy waits out, and
 * what a service answering the checks (the clearinghouse) answers. */
void ld_settle_plan_trade(const ld_trade *t, const ld_job_config *cfg,
                          ld_settle_plan *plan);

/* Record trade i as done now: its status and its latency since the run began. */
void ld_settle_finish(const ld_job_input *in, size_t i);

/* Block the calling OS thread for ns nanoseconds (threads and pinned carriers). */
void ld_settle_block_ns(int64_t ns);

/* The strategies, one file each. */
int ld_settle_threads(const ld_job_input *in);
int ld_settle_green(const ld_job_input *in);
int ld_settle_green_pinned(const ld_job_input *in);
int ld_settle_green_monitor(const ld_job_input *in);
int ld_settle_callbacks(const ld_job_input *in);

extern const ld_job ld_settle_job;

#endif
