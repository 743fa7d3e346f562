/* pool.c: the pool job's table: options, strategies, and the checks made before any
 * process starts. */
#include "pool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/resource.h>

#include "cpus.h"
#include "pool_load.h"

static const char *const loads[] = {"auto", "wrk", "builtin", NULL};

/* Every client and backend connection is a descriptor of the server's: a run that
 * needs more than the open-file limit would fail part way, so it is refused now. */
static int check_descriptors(const ld_pool_config *pc, char *err, size_t errlen)
{
    struct rlimit rl;
    uint64_t need = pc->connections + pc->backend_conns + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max == RLIM_INFINITY ||
        need <= rl.rlim_max)
        return 0;
    snprintf(err, errlen,
             "--connections %" PRIu64 " and --backend-conns %" PRIu64 " need %" PRIu64
             " open files in the server, past this machine's limit of %" PRIu64
             " (ulimit -Hn): lower either",
             pc->connections, pc->backend_conns, need, (uint64_t)rl.rlim_max);
    return -EINVAL;
}

static int pool_check(const void *opts, char *err, size_t errlen)
{
    const ld_pool_config *pc = opts;
    if (pc->load == LD_POOL_LOAD_WRK && !ld_load_available(LD_LOAD_WRK)) {
        snprintf(err, errlen,
                 "--load wrk: wrk is not on PATH; install it (apt-get "
                 "install wrk) or use --load builtin");
        return -EINVAL;
    }
    return check_descriptors(pc, err, errlen);
}

/* What the study's tables show, in the main table: throughput, tail latency and
 * memory, and what happened at the memory limit. */
static const char *const pool_columns[] = {"rps",
                                           "p99_ms",
                                           "rss_peak_mib",
                                           "cgroup_peak_mib",
                                           "stack_resident_mib",
                                           "capacity_mean",
                                           "frozen_mean",
                                           "limit_hits",
                                           "killed",
                                           NULL};

static const ld_strategy pool_strategies[] = {
    {"fresh", "a new green thread per request", ld_pool_fresh, LD_ON_ONE},
    {"pooled", "--connections long-lived green threads taking requests from a queue",
     ld_pool_pooled, LD_ON_ONE},
    {"pooled-trim",
     "pooled, a parked thread's capacity trimmed after --trim-after small "
     "freezes",
     ld_pool_pooled_trim, LD_ON_ONE},
};

#define AT(field) offsetof(ld_pool_config, field)
static const ld_opt pool_opts[] = {
    {"connections", LD_OPT_COUNT, AT(connections), 1, 1000000, 10000, NULL, "N",
     "closed-loop client connections per rank (default 10000)", LD_OPT_RESULT, NULL},
    {"think-ms", LD_OPT_REAL, AT(think_ms), 0, 60000, 30, NULL, "MS",
     "the backend's think time per call (default 30)", LD_OPT_RESULT, NULL},
    {"warmup-s", LD_OPT_REAL, AT(warmup_s), 0, 3600, 2, NULL, "S",
     "seconds of warm-up load before the measurement (default 2)", LD_OPT_RESULT, NULL},
    {"measure-s", LD_OPT_REAL, AT(measure_s), 0.1, 3600, 3, NULL, "S",
     "seconds of measured load (default 3)", LD_OPT_RESULT, NULL},
    {"study-phases", LD_OPT_FLAG, AT(study_phases), 0, 0, 0, NULL, NULL,
     "the study's 30 s warm-up and 30 s measurement (not with --warmup-s or --measure-s)",
     LD_OPT_RESULT, NULL},
    {"warmup-depth", LD_OPT_COUNT, AT(warmup_depth), 0, 1000, 4, NULL, "N",
     "frames of 256 bytes the warm-up's requests park under (default 4)", LD_OPT_RESULT,
     NULL},
    {"trim-after", LD_OPT_COUNT, AT(trim_after), 1, 1000000, 8, NULL, "K",
     "pooled-trim: trim a thread's capacity after K small freezes (default 8)",
     LD_OPT_RESULT, NULL},
    {"backend-conns", LD_OPT_COUNT, AT(backend_conns), 1, 1000000, 4096, NULL, "N",
     "backend connections the server shares, per rank (default 4096)", LD_OPT_RESULT,
     NULL},
    {"load", LD_OPT_CHOICE, AT(load), 0, 0, LD_POOL_LOAD_AUTO, loads, "auto|wrk|builtin",
     "the load generator: wrk, loomdist-load, or wrk where installed (default auto)",
     LD_OPT_RESULT, NULL},
    {"load-threads", LD_OPT_COUNT, AT(load_threads), 1, 64, 1, NULL, "N",
     "the load generator's threads (default 1)", LD_OPT_RESULT, NULL},
    LD_JOB_PROFILE_OPTS(ld_pool_config, profile),
};

/* The server before its first request: the process and its carriers. The threads a
 * pooled server parks, and what requests hold, are what the study measures against
 * the limit: a kill there is its finding, not a bad option. */
static uint64_t pool_mem_floor(const ld_job_config *cfg, const ld_strategy *s,
                               uint64_t *limit, char *what, size_t whatlen)
{
    (void)s;
    const ld_pool_config *pc = cfg->opts;
    unsigned cpus;
    ld_job_profile_asked(&pc->profile, &cpus, limit);
    unsigned granted = cpus && cpus < cfg->cpus->n ? cpus : cfg->cpus->n;
    return ld_job_profile_floor(cfg->carriers ? cfg->carriers : granted, 0, 0, 0, what,
                                whatlen);
}

/* Its tasks are the requests in flight at once, one per connection of the load, on
 * each rank: not trades. */
static uint64_t pool_tasks(const ld_job_config *cfg)
{
    const ld_pool_config *pc = cfg->opts;
    return pc->connections;
}

/* The study's phases are fixed lengths: a length given beside them would be ignored. */
static const ld_opt_conflict pool_conflicts[] = {
    {"study-phases", "warmup-s", "--study-phases warms up for 30 s"},
    {"study-phases", "measure-s", "--study-phases measures for 30 s"},
    {NULL, NULL, NULL},
};

const ld_job ld_pool_job = {
    .name = "pool",
    .summary = "the pooling study: an HTTP server whose requests call a backend on fresh "
               "or pooled green threads, under --connections of load",
    .notes = "the profile's CPUs and memory limit go to the server process alone; "
             "figures are per rank",
    .opt_in = 1,
    .strategies = pool_strategies,
    .nstrategies = LD_LEN(pool_strategies),
    .opts = pool_opts,
    .nopts = LD_LEN(pool_opts),
    .config_size = LD_JOB_CONFIG_SIZE(ld_pool_config),
    .check = pool_check,
    .conflicts = pool_conflicts,
    .mem_floor = pool_mem_floor,
    .tasks = pool_tasks,
    .tasks_option = "connections",
    .table = {LD_TABLE_TIME},
    .reports = {LD_REPORT_FIGURES},
    .table_figures = pool_columns,
    .prepare = ld_pool_prepare,
    .release = ld_pool_release,
};
