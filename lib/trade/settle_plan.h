/* settle_plan.h: how a trade settles: its five calls, the latency of each and the
 * outcome of each check, drawn from the trade's own LD_STREAM_SETTLE stream.
 *
 * A plan depends only on (seed, trade id, scale, fail rate), never on who draws it, so
 * the settle job's strategies wait out the very latencies, and meet the very
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

typedef struct ld_settle_plan {
    int64_t latency_ns[LD_SETTLE_CALLS]; /* scaled; 0 for a call that is not made */
    double pin_draw; /* the trade takes the monitor if < pin_fraction */
    uint8_t status;
    int8_t failed_check;
} ld_settle_plan;

/* Draw trade t's plan under seed, every latency multiplied by scale and each check
 * failing with probability fail_rate. */
void ld_settle_plan_trade(const ld_trade *t, uint64_t seed, double scale,
                          double fail_rate, ld_settle_plan *plan);

#endif
