/* settle_plan.h: how a trade settles: its five calls, the latency of each and the
 * outcome of each check, drawn from the trade's own LD_STREAM_SETTLE stream.
 *
 * A plan depends only on (seed, trade id, fail rate, pin fraction), never on who draws
 * it, so the settle job's strategies wait out the very latencies, and meet the very
 * outcomes, that the clearinghouse service answers with. Both link this, and neither
 * links the other.
 */
#ifndef LD_SETTLE_PLAN_H
#define LD_SETTLE_PLAN_H

#include <stdint.h>

#include "book.h"

enum ld_settle_status { LD_SETTLED = 0, LD_FAILED = 1 };

enum ld_settle_call {
    LD_CALL_FETCH = 0,        /* fetch trade (database), 1-5 ms */
    LD_CALL_COUNTERPARTY = 1, /* validate counterparty, 60-160 ms: a check */
    LD_CALL_BUYING_POWER = 2, /* check buying power, 40-120 ms: a check */
    LD_CALL_SHARES = 3, /* confirm share availability, SELL only, 50-140 ms: a check */
    LD_CALL_UPDATE = 4, /* update status (database), 1-5 ms */
    LD_SETTLE_CALLS = 5,
};

/* The ranges of --latency-scale and --fail-rate, which the clearinghouse holds its
 * queries' scale and fail to as well. */
#define LD_SETTLE_SCALE_MIN 1e-6
#define LD_SETTLE_SCALE_MAX 1000
#define LD_SETTLE_FAIL_MIN 0
#define LD_SETTLE_FAIL_MAX 1

/* A trade's plan in 8 bytes, as a run keeps one for each of its trades (a million on
 * one rank): each call's draw in whole milliseconds, its latency being
 * ld_settle_call_ns of it, and the outcomes. */
typedef struct ld_settle_plan {
    uint8_t ms[LD_SETTLE_CALLS]; /* each call's draw; 0 for a call that is not made */
    uint8_t status;              /* enum ld_settle_status */
    int8_t failed_check;         /* the first check that fails, -1 for none */
    uint8_t pinned;              /* the monitor's draw fell below the pin fraction */
} ld_settle_plan;

_Static_assert(sizeof(ld_settle_plan) == 8, "a plan is 8 bytes");

/* Draw trade t's plan under seed, each check failing with probability fail_rate and
 * the trade taking the monitor with probability pin_fraction. */
void ld_settle_plan_trade(const ld_trade *t, uint64_t seed, double fail_rate,
                          double pin_fraction, ld_settle_plan *plan);

/* The latency of a call drawn as ms whole milliseconds, every latency multiplied by
 * scale: at least a nanosecond, scale being at least LD_SETTLE_SCALE_MIN. */
static inline int64_t ld_settle_ms_ns(uint8_t ms, double scale)
{
    return (int64_t)((double)ms * 1e6 * scale);
}

/* Call c's latency in plan: 0 for a call that is not made (plan->ms[c] == 0). */
static inline int64_t ld_settle_call_ns(const ld_settle_plan *plan, int c, double scale)
{
    return ld_settle_ms_ns(plan->ms[c], scale);
}

/* The plan's calls' latencies together: the least time the trade can settle in. */
static inline int64_t ld_settle_plan_ns(const ld_settle_plan *plan, double scale)
{
    int64_t total = 0;
    for (int c = 0; c < LD_SETTLE_CALLS; c++)
        total += ld_settle_call_ns(plan, c, scale);
    return total;
}

#endif
