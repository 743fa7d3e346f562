/* settle_plan.c: a trade's settlement plan from its own stream. */
#include "settle_plan.h"

/* Latency range of each call in whole milliseconds, as the seed study drew them. */
static const uint8_t call_ms[LD_SETTLE_CALLS][2] = {
    {1, 5}, {60, 160}, {40, 120}, {50, 140}, {1, 5}};

/* Every draw is made in a fixed order whatever the trade's side or the configuration,
 * so the stream stays aligned and a plan depends only on (seed, id, fail_rate,
 * pin_fraction). */
void ld_settle_plan_trade(const ld_trade *t, uint64_t seed, double fail_rate,
                          double pin_fraction, ld_settle_plan *plan)
{
    ld_pcg32 rng = ld_trade_stream(seed, t->id, LD_STREAM_SETTLE);
    plan->status = LD_SETTLED;
    plan->failed_check = -1;
    for (int c = 0; c < LD_SETTLE_CALLS; c++) {
        uint32_t ms = ld_pcg32_range(&rng, call_ms[c][0], call_ms[c][1]);
        int fails = ld_pcg32_double(&rng) < fail_rate;
        int made = c != LD_CALL_SHARES || t->side == LD_SELL;
        int is_check = c >= LD_CALL_COUNTERPARTY && c <= LD_CALL_SHARES;
        plan->ms[c] = made ? (uint8_t)ms : 0;
        if (made && is_check && fails && plan->status == LD_SETTLED) {
            plan->status = LD_FAILED;
            plan->failed_check = (int8_t)c;
        }
    }
    plan->pinned = ld_pcg32_double(&rng) < pin_fraction;
}
