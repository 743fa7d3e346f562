/* settle.c: the settle job: plans from each trade's stream, and its strategy table. */
#include "settle.h"

#include "gt.h"
#include "settle_db.h"
#include "settle_http.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void settle_release(void *prepared)
{
    ld_settle_prepared *p = prepared;
    ld_settle_http_close(p->http);
    ld_settle_db_close(p->db);
    free(p->plans);
    free(p->scratch);
    free(p);
}

/* What the shared text names, split: the clearinghouse's part, then after a newline
 * the database's schema. */
typedef struct settle_shared {
    const void *http; /* an ld_clearinghouse_thread, or NULL */
    void *db;         /* the database's state, or NULL */
} settle_shared;

/* Under --io http where the checks go, under --db postgres the rank's trades loaded. */
static int open_services(ld_settle_prepared *p, const ld_job_config *cfg,
                         const ld_trade *trades, size_t n)
{
    const ld_settle_config *sc = cfg->opts;
    char http[LD_JOB_SHARED_MAX] = "";
    const char *db = "";
    if (cfg->shared) {
        snprintf(http, sizeof http, "%s", cfg->shared);
        char *nl = strchr(http, '\n');
        db = nl ? cfg->shared + (nl - http) + 1 : "";
        if (nl)
            *nl = '\0';
    }
    ld_job_config own = *cfg;
    own.shared = http;
    int rc = sc->io == LD_SETTLE_HTTP ? ld_settle_http_open(&p->http, &own) : 0;
    if (rc == 0 && sc->db == LD_SETTLE_DB_POSTGRES)
        rc = ld_settle_db_open(&p->db, cfg, db, trades, n);
    if (rc != 0) {
        ld_settle_http_close(p->http);
        p->http = NULL;
    }
    return rc;
}

/* Both services' shares on rank 0, the clearinghouse's text first. */
static int settle_share(const ld_job_config *cfg, const char *host, char *blob,
                        size_t len, void **state)
{
    const ld_settle_config *sc = cfg->opts;
    settle_shared *s = calloc(1, sizeof *s);
    void *http = NULL;
    if (!s)
        return -ENOMEM;
    int rc = ld_settle_http_share(cfg, host, blob, len, &http);
    size_t used = strlen(blob);
    if (rc == 0 && sc->db == LD_SETTLE_DB_POSTGRES && used + 2 < len) {
        blob[used] = '\n';
        rc = ld_settle_db_share(cfg, host, blob + used + 1, len - used - 1, &s->db);
        if (rc != 0)
            memmove(blob, blob + used + 1, strlen(blob + used + 1) + 1);
    }
    if (rc != 0 && http)
        ld_settle_http_unshare(http);
    s->http = http;
    if (rc != 0)
        free(s);
    else
        *state = s;
    return rc;
}

static void settle_unshare(void *state)
{
    settle_shared *s = state;
    if (s->http)
        ld_settle_http_unshare((void *)s->http);
    if (s->db)
        ld_settle_db_unshare(s->db);
    free(s);
}

/* Each service's option check. */
static int settle_check(const void *opts, char *err, size_t errlen)
{
    int rc = ld_settle_http_check(opts, err, errlen);
    return rc ? rc : ld_settle_db_check(opts, err, errlen);
}

/* The scratch's bytes: only callbacks keeps per-trade state of its own, so a run
 * without it has none, and its trades' memory is theirs alone. */
static size_t settle_scratch_bytes(const ld_job_config *cfg, size_t n)
{
    bool callbacks = !cfg->strategies || (cfg->strategies >> LD_SETTLE_CALLBACKS & 1u);
    return callbacks ? (n ? n : 1) * LD_SETTLE_SCRATCH : 0;
}

/* Plans for all the rank's trades, and under --io http where the checks go (under
 * --db postgres the trades loaded); the bound is the critical path, the longest total
 * latency of any one trade, which no strategy can beat. */
static int settle_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                          void **prepared, int64_t *bound_ns)
{
    const ld_settle_config *sc = cfg->opts;
    ld_settle_prepared *p = calloc(1, sizeof *p);
    ld_settle_plan *plans = calloc(n ? n : 1, sizeof *plans);
    size_t scratch_bytes = settle_scratch_bytes(cfg, n);
    void *scratch = scratch_bytes ? malloc(scratch_bytes) : NULL;
    int rc = p && plans && (scratch || !scratch_bytes) ? 0 : -ENOMEM;
    if (rc == 0)
        rc = open_services(p, cfg, trades, n);
    if (rc != 0) {
        free(scratch);
        free(plans);
        free(p);
        return rc;
    }
    if (scratch)
        memset(scratch, 0, scratch_bytes); /* its pages faulted in now */
    p->plans = plans;
    p->scratch = scratch;
    p->scale = sc->latency_scale * cfg->slow_factor;
    int64_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        ld_settle_plan_trade(&trades[i], cfg->seed, sc->fail_rate, sc->pin_fraction,
                             &plans[i]);
        int64_t total = ld_settle_plan_ns(&plans[i], p->scale);
        if (total > longest)
            longest = total;
    }
    *prepared = p;
    *bound_ns = longest;
    return 0;
}

/* Bytes per trade of a check in flight under --io http: the client's connection and
 * the first page of its read buffer, and a local clearinghouse's end of it. */
#define HTTP_BYTES_PER_TRADE (16u * 1024u)

/* Bytes per trade beside its green thread: the trade (40), its plan (8) and result
 * (16), its places in the run queue, the timing wheel and the depot's free array (24),
 * and twice that for the heap's rounding and what a strategy keeps besides. */
#define STATE_BYTES_PER_TRADE 192u

/* A parked green thread per trade, as the runtime counts it, and the trade's state;
 * callbacks' scratch, and under --io http a connection per trade too. */
static uint64_t settle_resident_bytes(const ld_job_config *cfg, size_t n)
{
    const ld_settle_config *sc = cfg->opts;
    uint64_t http = sc->io == LD_SETTLE_HTTP ? HTTP_BYTES_PER_TRADE : 0;
    return ld_gt_resident_bytes(cfg->stack_mode, cfg->stack_size, n) +
           (uint64_t)n * (STATE_BYTES_PER_TRADE + LD_SETTLE_SCRATCH + http);
}

/* The threads strategy's pool; the others run on the carriers. */
static unsigned settle_threads_count(const ld_job_config *cfg, const ld_strategy *s)
{
    (void)s;
    const ld_settle_config *sc = cfg->opts;
    return (unsigned)sc->os_threads;
}

/* Indexed by enum ld_settle_strategy, which settle_db.c's sizing reads. */
static const ld_strategy settle_strategies[LD_SETTLE_STRATEGIES] = {
    [LD_SETTLE_THREADS] =
        {"threads", "a pool of --os-threads OS threads, each call a blocking sleep",
         ld_settle_threads, LD_ON_OWN},
    [LD_SETTLE_GREEN] =
        {"green", "one green thread per trade, each call parks it until its deadline",
         ld_settle_green, LD_ON_CARRIERS},
    [LD_SETTLE_GREEN_PINNED] =
        {"green-pinned",
         "green, but --pin-fraction of trades block their carrier in a monitor",
         ld_settle_green_pinned, LD_ON_CARRIERS},
    [LD_SETTLE_GREEN_MONITOR] =
        {"green-monitor", "the same monitor, parking the green thread instead (JEP 491)",
         ld_settle_green_monitor, LD_ON_CARRIERS},
    [LD_SETTLE_CALLBACKS] =
        {"callbacks",
         "stackless: one state machine per trade, each call a deadline on the loop",
         ld_settle_callbacks, LD_ON_LOOPS},
};

#define AT(field) offsetof(ld_settle_config, field)

static const char *const io_modes[] = {"sleep", "http", NULL}; /* enum ld_settle_io */
static const char *const places[] = {"local", "rank0", NULL};
static const char *const db_modes[] = {"none", "postgres", NULL}; /* ld_settle_db_mode */
static const char *const db_urls[] = {"env", "local", "rank0", NULL};

static const ld_opt settle_opts[] = {
    LD_SETTLE_OPT_LATENCY_SCALE(AT(latency_scale)),
    LD_SETTLE_OPT_FAIL_RATE(AT(fail_rate)),
    {"pin-fraction", LD_OPT_REAL, AT(pin_fraction), 0, 1, 0.01, NULL, "F",
     "share of trades that take the monitor in green-pinned and green-monitor "
     "(default 0.01: enough to show the collapse in seconds)",
     LD_OPT_RESULT, NULL},
    {"os-threads", LD_OPT_COUNT, AT(os_threads), 1, 100000, 200, NULL, "N",
     "threads: OS threads in the pool, per rank (default 200)", LD_OPT_RESULT, NULL},
    {"io", LD_OPT_CHOICE, AT(io), 0, 0, LD_SETTLE_SLEEP, io_modes, "sleep|http",
     "the checks: waits of their latency, or HTTP calls to a clearinghouse that "
     "answers after it (default sleep)",
     LD_OPT_RESULT, NULL},
    {"clearinghouse", LD_OPT_TEXT, AT(clearinghouse), 0, 0, 0, places,
     "local|rank0|HOST:PORT",
     "http: one per rank, one on rank 0 for all, or a server of its own (default "
     "local)",
     LD_OPT_RESULT, NULL},
    {"ch-max-inflight", LD_OPT_COUNT, AT(ch_max_inflight), 0, 1e9, 0, NULL, "N",
     "http: checks a clearinghouse loomdist starts serves at once, the rest queue "
     "(default 0: no cap)",
     LD_OPT_RESULT, NULL},
    {"ch-timeout", LD_OPT_REAL, AT(ch_timeout), 0.001, 3600, 60, NULL, "S",
     "http: the longest one check may take, from its connect to its answer, a wait "
     "under --ch-max-inflight included; past it the run fails (default 60)",
     0, NULL},
    {"db", LD_OPT_CHOICE, AT(db), 0, 0, LD_SETTLE_DB_NONE, db_modes, "none|postgres",
     "fetch and update: waits of their latency, or SQL on PostgreSQL at --db-url "
     "(default none)",
     LD_OPT_RESULT, NULL},
    {"db-url", LD_OPT_TEXT, AT(db_url), 0, 0, 0, db_urls, "env|local|rank0|URL",
     "postgres: the server: libpq's PGHOST, PGPORT, PGUSER and PGDATABASE (default "
     "env), a private one per rank or one on rank 0 for all that loomdist starts, or "
     "a postgresql:// URL",
     0, NULL},
    {"db-pipes", LD_OPT_COUNT, AT(db_pipes), 1, 4096, 1, NULL, "N",
     "postgres: pipelined connections per carrier that its trades share (default 1); "
     "threads has --db-conns",
     LD_OPT_RESULT, NULL},
    {"db-conns", LD_OPT_COUNT, AT(db_conns), 1, 4096, LD_SETTLE_DB_CONNS, NULL, "N",
     "postgres: connections per rank that threads' OS threads share, each call waiting "
     "for a free one, as with a JDBC pool (default 10, HikariCP's; at most "
     "--os-threads)",
     LD_OPT_RESULT, NULL},
};

#define COL(field) offsetof(ld_settle_result, field)

static const ld_column settle_columns[] = {
    LD_SETTLE_COL_STATUS(COL(status)),
    LD_SETTLE_COL_FAILED_CHECK(COL(failed_check)),
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
    .config_size = LD_JOB_CONFIG_SIZE(ld_settle_config),
    .columns = settle_columns,
    .ncolumns = LD_LEN(settle_columns),
    .result_size = sizeof(ld_settle_result),
    .table = {LD_TABLE_TASKS, LD_TABLE_TIME, LD_TABLE_THROUGHPUT, LD_TABLE_THREADS,
              LD_TABLE_MEMORY, LD_TABLE_IMBALANCE},
    .reports = {LD_REPORT_BOUND, LD_REPORT_PERCENTILES, LD_REPORT_FIGURES},
    .bound_name = "critical path",
    .bound_attr = "critical_path_ns",
    .check = settle_check,
    .prepare = settle_prepare,
    .release = settle_release,
    .share = settle_share,
    .unshare = settle_unshare,
    .resident_bytes = settle_resident_bytes,
    .threads_fn = settle_threads_count,
};
