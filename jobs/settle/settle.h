/* settle.h: what every settle strategy shares: its options, each trade's plan (the
 * five calls, lib/trade/settle_plan.h) and how a strategy settles a trade.
 *
 * A trade's plan is drawn from its own LD_STREAM_SETTLE stream before any strategy
 * runs: the latency of each call, the outcome of each check, and whether it takes the
 * monitor. Strategies differ only in how they wait out the latencies.
 *
 * Under --io sleep every call is a wait of its latency and a check's outcome is the
 * plan's. Under --io http the three checks are HTTP calls to the clearinghouse
 * (settle_http.h), which answers each after the same latency with the same outcome;
 * fetch and update stay waits. Either way every call is made, and a trade's failed
 * check is the first that answered "fail".
 */
#ifndef LD_SETTLE_H
#define LD_SETTLE_H

#include "job.h"
#include "settle_plan.h"

enum ld_settle_io { LD_SETTLE_SLEEP = 0, LD_SETTLE_HTTP = 1 };

enum ld_settle_db_mode { LD_SETTLE_DB_NONE = 0, LD_SETTLE_DB_POSTGRES = 1 };

/* settle's options (--latency-scale, --fail-rate, --pin-fraction, --os-threads, --io,
 * --clearinghouse, --ch-max-inflight, --ch-timeout, --db, --db-url, --db-pipes,
 * --db-conns). */
typedef struct ld_settle_config {
    double latency_scale;                /* multiplies every latency */
    double fail_rate;                    /* failure probability of each check */
    double pin_fraction;                 /* share of trades that take the monitor */
    uint64_t os_threads;                 /* threads: OS threads in the pool */
    int io;                              /* enum ld_settle_io */
    char clearinghouse[LD_OPT_TEXT_MAX]; /* http: local, rank0 or HOST:PORT */
    uint64_t ch_max_inflight;            /* http: the cap of one loomdist starts; 0 */
    double ch_timeout;                   /* http: the longest one check takes, in s */
    int db;                              /* enum ld_settle_db_mode */
    char db_url[LD_OPT_TEXT_MAX];        /* postgres: env, local, rank0 or a URL */
    uint64_t db_pipes;                   /* postgres: pipelined connections a carrier */
    uint64_t db_conns;                   /* postgres: the threads strategy's pool */
} ld_settle_config;

/* --db-conns' default: HikariCP's default pool size, which at -n 4 fits a stock server
 * (max_connections 100) with room to spare. */
#define LD_SETTLE_DB_CONNS 10

/* One trade's outcome: the per-task columns settle declares. */
typedef struct ld_settle_result {
    int64_t latency_ns;  /* from the strategy's start to the trade's settlement */
    uint8_t status;      /* enum ld_settle_status */
    int8_t failed_check; /* index of the first failed call, -1 for none */
} ld_settle_result;

typedef struct ld_settle_http ld_settle_http;
typedef struct ld_settle_db ld_settle_db;

/* What prepare leaves for every strategy. */
/* Bytes of per-trade state callbacks keeps in the prepared scratch. */
#define LD_SETTLE_SCRATCH 32

typedef struct ld_settle_prepared {
    ld_settle_plan *plans; /* one per trade of the rank */
    double scale;          /* every latency's factor: --latency-scale, slowed */
    ld_settle_http *http;  /* --io http: where the checks go; NULL under --io sleep */
    ld_settle_db *db;      /* --db postgres: fetch and update's; NULL under --db none */
    /* LD_SETTLE_SCRATCH bytes per trade for callbacks' per-trade state, written once
     * by prepare so that its clock pays for no first touch of its pages; NULL when
     * callbacks does not run. */
    void *scratch;
} ld_settle_prepared;

/* The scratch of the run in, LD_SETTLE_SCRATCH bytes per trade, for callbacks. */
static inline void *ld_settle_scratch(const ld_job_input *in)
{
    return ((const ld_settle_prepared *)in->prepared)->scratch;
}

/* Trade i's plan. */
static inline const ld_settle_plan *ld_settle_plan_of(const ld_job_input *in, size_t i)
{
    return &((const ld_settle_prepared *)in->prepared)->plans[i];
}

/* Call c's latency in trade plan p of the run in: 0 for a call that is not made. */
static inline int64_t ld_settle_latency(const ld_job_input *in, const ld_settle_plan *p,
                                        int c)
{
    return ld_settle_call_ns(p, c, ((const ld_settle_prepared *)in->prepared)->scale);
}

/* The clearinghouse the checks go to, or NULL when every call is a wait. */
static inline const ld_settle_http *ld_settle_http_of(const ld_job_input *in)
{
    return ((const ld_settle_prepared *)in->prepared)->http;
}

/* The database fetch and update go to, or NULL when they are waits. */
static inline ld_settle_db *ld_settle_db_of(const ld_job_input *in)
{
    return ((const ld_settle_prepared *)in->prepared)->db;
}

/* The calls the clearinghouse answers under --io http. */
static inline int ld_settle_is_check(int call)
{
    return call >= LD_CALL_COUNTERPARTY && call <= LD_CALL_SHARES;
}

/* Call `call` came back with outcome (1: it failed): the first failure is the trade's
 * failed check. */
static inline void ld_settle_note(int *failed_check, int call, int outcome)
{
    if (outcome == 1 && *failed_check < 0)
        *failed_check = call;
}

/* The validation calls, the ones a monitor wraps in green-pinned and green-monitor. */
static inline int ld_settle_in_monitor(int call)
{
    return call == LD_CALL_COUNTERPARTY || call == LD_CALL_BUYING_POWER;
}

/* Whether trade i takes the monitor under this configuration. */
static inline int ld_settle_pinned(const ld_job_input *in, size_t i)
{
    return ld_settle_plan_of(in, i)->pinned;
}

/* Record trade i as done now, its failed check failed_check (-1: none): its status,
 * and its latency since the run began. */
void ld_settle_finish(const ld_job_input *in, size_t i, int failed_check);

/* A strategy's run is over, with rc: under a clearinghouse of the rank's own, its
 * stats for the run go into the run's named figures. Returns rc. */
int ld_settle_end(const ld_job_input *in, int rc);

/* Block the calling OS thread for ns nanoseconds (threads and pinned carriers). */
void ld_settle_block_ns(int64_t ns);

/* settle's strategies, in the order of its table (settle.c): bit s of cfg->strategies
 * selects strategy s. threads alone runs on OS threads of its own. */
enum ld_settle_strategy {
    LD_SETTLE_THREADS,
    LD_SETTLE_GREEN,
    LD_SETTLE_GREEN_PINNED,
    LD_SETTLE_GREEN_MONITOR,
    LD_SETTLE_CALLBACKS,
    LD_SETTLE_STRATEGIES
};

/* Whether the strategies cfg selects (cfg->strategies; 0: all) include threads, the
 * one on OS threads of its own; and one on carriers or loops. */
static inline int ld_settle_runs_threads(const ld_job_config *cfg)
{
    return !cfg->strategies || (cfg->strategies & 1u << LD_SETTLE_THREADS);
}

static inline int ld_settle_runs_carriers(const ld_job_config *cfg)
{
    return !cfg->strategies || (cfg->strategies & ~(1u << LD_SETTLE_THREADS));
}

/* The strategies, one file each. */
int ld_settle_threads(const ld_job_input *in);
int ld_settle_green(const ld_job_input *in);
int ld_settle_green_pinned(const ld_job_input *in);
int ld_settle_green_monitor(const ld_job_input *in);
int ld_settle_callbacks(const ld_job_input *in);

extern const ld_job ld_settle_job;

/* settle's options, for another job that settles the same trades and declares them
 * alike (job.h): the latency scale and the fail rate, at the given offsets of its
 * config. */
#define LD_SETTLE_OPT_LATENCY_SCALE(offset)                                              \
    {                                                                                    \
        "latency-scale", LD_OPT_REAL, (offset), LD_SETTLE_SCALE_MIN,                     \
            LD_SETTLE_SCALE_MAX, 1, NULL, "X",                                           \
            "multiply every call latency by X (default 1; tests use 0.02)",              \
            LD_OPT_RESULT, NULL                                                          \
    }
#define LD_SETTLE_OPT_FAIL_RATE(offset)                                                  \
    {                                                                                    \
        "fail-rate", LD_OPT_REAL, (offset), LD_SETTLE_FAIL_MIN, LD_SETTLE_FAIL_MAX,      \
            0.002, NULL, "P", "probability that each check fails (default 0.002)",       \
            LD_OPT_RESULT, NULL                                                          \
    }

/* Settle's per-trade outcome columns, declared once for every job that reports them (a
 * result struct's uint8_t status and int8_t failed_check at these offsets). */
#define LD_SETTLE_COL_STATUS(offset)                                                     \
    {                                                                                    \
        "status", LD_COL_U8, "", (offset), "0 settled, 1 failed", 0                      \
    }
#define LD_SETTLE_COL_FAILED_CHECK(offset)                                               \
    {                                                                                    \
        "failed_check", LD_COL_I8, "", (offset),                                         \
            "the call that failed (1 counterparty, 2 buying power, 3 shares), -1 for "   \
            "none",                                                                      \
            0                                                                            \
    }

#endif
