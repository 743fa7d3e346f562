/* settle.c: the settle job: plans from each trade's stream, and its strategy table. */
#include "settle.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

/* Latency range of each call in whole milliseconds, as the seed study drew them. */
static const uint32_t call_ms[LD_SETTLE_CALLS][2] = {
    {1, 5}, {60, 160}, {40, 120}, {50, 140}, {1, 5}};

/* Every draw is made in a fixed order whatever the trade's side or the configuration,
 * so the stream stays aligned and a plan depends only on (seed, id, scale, fail_rate). */
void ld_settle_plan_trade(const ld_trade *t, const ld_job_config *cfg,
                          ld_settle_plan *plan)
{
    const ld_settle_config *sc = cfg->opts;
    double scale = sc->latency_scale * cfg->slow_factor;
    ld_pcg32 rng = ld_trade_stream(cfg->seed, t->id, LD_STREAM_SETTLE);
    plan->status = LD_SETTLED;
    plan->failed_check = -1;
    for (int c = 0; c < LD_SETTLE_CALLS; c++) {
        uint32_t ms = ld_pcg32_range(&rng, call_ms[c][0], call_ms[c][1]);
        int fails = ld_pcg32_double(&rng) < sc->fail_rate;
        int made = c != LD_CALL_SHARES || t->side == LD_SELL;
        int is_check = c >= LD_CALL_COUNTERPARTY && c <= LD_CALL_SHARES;
        plan->latency_ns[c] = made ? (int64_t)((double)ms * 1e6 * scale) : 0;
        if (made && is_check && fails && plan->status == LD_SETTLED) {
            plan->status = LD_FAILED;
            plan->failed_check = (int8_t)c;
        }
    }
    plan->pin_draw = ld_pcg32_double(&rng);
}

/* Plans for all the rank's trades; the bound is the critical path, the longest total
 * latency of any one trade, which no strategy can beat. */
static int settle_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                          void **prepared, int64_t *bound_ns)
{
    ld_settle_plan *plans = calloc(n ? n : 1, sizeof *plans);
    if (!plans)
        return -ENOMEM;
    int64_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        ld_settle_plan_trade(&trades[i], cfg, &plans[i]);
        int64_t total = 0;
        for (int c = 0; c < LD_SETTLE_CALLS; c++)
            total += plans[i].latency_ns[c];
        if (total > longest)
            longest = total;
    }
    *prepared = plans;
    *bound_ns = longest;
    return 0;
}

void ld_settle_finish(const ld_job_input *in, size_t i)
{
    const ld_settle_plan *plan = (const ld_settle_plan *)in->prepared + i;
    ld_settle_result *out = in->results;
    out[i].latency_ns = ld_now_ns() - in->t0;
    out[i].status = plan->status;
    out[i].failed_check = plan->failed_check;
}

void ld_settle_block_ns(int64_t ns)
{
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
        ;
}

/* A parked green thread per trade, as the runtime counts it, and the trade's plan,
 * task and result. */
static uint64_t settle_resident_bytes(const ld_job_config *cfg, size_t n)
{
    return ld_gt_resident_bytes(cfg->stack_mode, cfg->stack_size, n) + (uint64_t)n * 512;
}

/* The threads strategy's pool; the others run on the carriers. */
static unsigned settle_threads_count(const ld_job_config *cfg, const ld_strategy *s)
{
    (void)s;
    const ld_settle_config *sc = cfg->opts;
    return (unsigned)sc->os_threads;
}

static const ld_strategy settle_strategies[] = {
    {"threads", "a pool of --os-threads OS threads, each call a blocking sleep",
     ld_settle_threads, LD_ON_OWN},
    {"green", "one green thread per trade, each call parks it until its deadline",
     ld_settle_green, LD_ON_CARRIERS},
    {"green-pinned",
     "green, but --pin-fraction of trades block their carrier in a monitor",
     ld_settle_green_pinned, LD_ON_CARRIERS},
    {"green-monitor", "the same monitor, parking the green thread instead (JEP 491)",
     ld_settle_green_monitor, LD_ON_CARRIERS},
    {"callbacks",
     "stackless: one state machine per trade, each call a deadline on the loop",
     ld_settle_callbacks, LD_ON_LOOPS},
};

#define AT(field) offsetof(ld_settle_config, field)

static const ld_opt settle_opts[] = {
    {"latency-scale", LD_OPT_REAL, AT(latency_scale), 1e-6, 1000, 1, NULL, "X",
     "multiply every call latency by X (default 1; tests use 0.02)", LD_OPT_RESULT, NULL},
    {"fail-rate", LD_OPT_REAL, AT(fail_rate), 0, 1, 0.002, NULL, "P",
     "probability that each check fails (default 0.002)", LD_OPT_RESULT, NULL},
    {"pin-fraction", LD_OPT_REAL, AT(pin_fraction), 0, 1, 0.01, NULL, "F",
     "share of trades that take the monitor in green-pinned and green-monitor "
     "(default 0.01: enough to show the collapse in seconds)",
     LD_OPT_RESULT, NULL},
    {"os-threads", LD_OPT_COUNT, AT(os_threads), 1, 100000, 200, NULL, "N",
     "threads: OS threads in the pool, per rank (default 200)", LD_OPT_RESULT, NULL},
};

#define COL(field) offsetof(ld_settle_result, field)

static const ld_column settle_columns[] = {
    {"status", LD_COL_U8, "", COL(status), "0 settled, 1 failed", 0},
    {"failed_check", LD_COL_I8, "", COL(failed_check),
     "the call that failed (1 counterparty, 2 buying power, 3 shares), -1 for none", 0},
    {"latency_ns", LD_COL_I64, "ns", COL(latency_ns),
     "from the strategy's start to the trade's settlement", LD_COL_PERCENTILES},
};

const ld_job ld_settle_job = {
    .name = "settle",
    .summary = "T+1 settlement, I/O-bound: five blocking round trips per trade",
    .strategies = settle_strategies,
    .nstrategies = LD_LEN(settle_strategies),
    .opts = settle_opts,
    .nopts = LD_LEN(settle_opts),
    .config_size = sizeof(ld_settle_config),
    .columns = settle_columns,
    .ncolumns = LD_LEN(settle_columns),
    .result_size = sizeof(ld_settle_result),
    .table = {LD_TABLE_TASKS, LD_TABLE_TIME, LD_TABLE_THROUGHPUT, LD_TABLE_THREADS,
              LD_TABLE_MEMORY, LD_TABLE_IMBALANCE},
    .reports = {LD_REPORT_BOUND, LD_REPORT_PERCENTILES},
    .bound_name = "critical path",
    .bound_attr = "critical_path_ns",
    .prepare = settle_prepare,
    .resident_bytes = settle_resident_bytes,
    .threads_fn = settle_threads_count,
};
