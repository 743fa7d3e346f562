/* test_job_check.c: ld_job_check refuses a declaration that names two of its columns,
 * strategies, options or table figures alike, or two percentile columns with one unit
 * (their datasets would collide), each in one line naming the job and the name, and a
 * job with tasks of its own that declares per-task columns; a declaration without them
 * passes, and so does every registered job. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "job.h"

typedef struct bad_result {
    int64_t a, b, c;
} bad_result;

typedef struct bad_config {
    uint64_t x, y;
} bad_config;

static int run_nothing(const ld_job_input *in)
{
    (void)in;
    return 0;
}

static const ld_column good_columns[] = {
    {"latency_ns", LD_COL_I64, "ns", offsetof(bad_result, a), "a", LD_COL_PERCENTILES},
    {"wait_ns", LD_COL_I64, "ns", offsetof(bad_result, b), "b", 0},
    {"pnl", LD_COL_I64, "USD", offsetof(bad_result, c), "c", LD_COL_PERCENTILES},
};
static const ld_column twin_columns[] = {
    {"latency_ns", LD_COL_I64, "ns", offsetof(bad_result, a), "a", 0},
    {"wait_ns", LD_COL_I64, "ns", offsetof(bad_result, b), "b", 0},
    {"latency_ns", LD_COL_I64, "ns", offsetof(bad_result, c), "c", 0},
};
static const ld_column twin_units[] = {
    {"latency_ns", LD_COL_I64, "ns", offsetof(bad_result, a), "a", LD_COL_PERCENTILES},
    {"pnl", LD_COL_I64, "USD", offsetof(bad_result, b), "b", LD_COL_PERCENTILES},
    {"wait_ns", LD_COL_I64, "ns", offsetof(bad_result, c), "c", LD_COL_PERCENTILES},
};

static const ld_strategy good_strategies[] = {
    {"loop", "one", run_nothing, LD_ON_ONE},
    {"green", "two", run_nothing, LD_ON_ONE},
};
static const ld_strategy twin_strategies[] = {
    {"loop", "one", run_nothing, LD_ON_ONE},
    {"green", "two", run_nothing, LD_ON_ONE},
    {"loop", "three", run_nothing, LD_ON_ONE},
};

static const ld_opt good_opts[] = {
    {"x", LD_OPT_COUNT, offsetof(bad_config, x), 1, 10, 1, NULL, "N", "x", 0, NULL},
    {"y", LD_OPT_COUNT, offsetof(bad_config, y), 1, 10, 1, NULL, "N", "y", 0, NULL},
};
static const ld_opt twin_opts[] = {
    {"x", LD_OPT_COUNT, offsetof(bad_config, x), 1, 10, 1, NULL, "N", "x", 0, NULL},
    {"x", LD_OPT_COUNT, offsetof(bad_config, y), 1, 10, 1, NULL, "N", "y", 0, NULL},
};

static const char *const good_figures[] = {"rps", "p99_ms", NULL};
static const char *const twin_figures[] = {"rps", "p99_ms", "rps", NULL};

/* A declaration that ld_job_check takes. */
static ld_job good_job(void)
{
    return (ld_job){
        .name = "bad",
        .summary = "a test's declarations",
        .strategies = good_strategies,
        .nstrategies = LD_LEN(good_strategies),
        .opts = good_opts,
        .nopts = LD_LEN(good_opts),
        .config_size = sizeof(bad_config),
        .columns = good_columns,
        .ncolumns = LD_LEN(good_columns),
        .result_size = sizeof(bad_result),
        .table_figures = good_figures,
    };
}

static void check_refused(const ld_job *job, const char *want)
{
    char err[256] = "";
    int rc = ld_job_check(job, err, sizeof err);
    CHECK(rc == -EINVAL && strcmp(err, want) == 0, "rc %d, '%s', not '%s'", rc, err,
          want);
}

static void check_twins(void)
{
    ld_job job = good_job();
    job.columns = twin_columns, job.ncolumns = LD_LEN(twin_columns);
    check_refused(&job, "job bad has two columns named latency_ns");
    job = good_job();
    job.columns = twin_units, job.ncolumns = LD_LEN(twin_units);
    check_refused(&job, "job bad has two percentile columns (datasets p50_, p99_, "
                        "max_<unit>) in the unit ns");
    job = good_job();
    job.strategies = twin_strategies, job.nstrategies = LD_LEN(twin_strategies);
    check_refused(&job, "job bad has two strategies named loop");
    job = good_job();
    job.opts = twin_opts, job.nopts = LD_LEN(twin_opts);
    check_refused(&job, "job bad has two options named x");
    job = good_job();
    job.table_figures = twin_figures;
    check_refused(&job, "job bad has two table figures named rps");
}

static uint64_t own_tasks(const ld_job_config *cfg)
{
    (void)cfg;
    return 1;
}

/* A job's per-task datasets have a row per trade, so a job with tasks of its own
 * reports figures, never per-task columns. */
static void check_own_tasks(void)
{
    ld_job job = good_job();
    job.tasks = own_tasks, job.tasks_option = "x";
    check_refused(&job, "job bad counts tasks of its own (--x), so it has no per-task "
                        "columns: report figures instead");
    job.columns = NULL, job.ncolumns = 0, job.result_size = 0;
    char err[256] = "";
    CHECK(ld_job_check(&job, err, sizeof err) == 0, "own tasks, no columns: %s", err);
}

static void check_passes(void)
{
    char err[256] = "";
    ld_job job = good_job();
    CHECK(ld_job_check(&job, err, sizeof err) == 0, "the good declaration: %s", err);
    job.table_figures = NULL;
    CHECK(ld_job_check(&job, err, sizeof err) == 0, "no table figures: %s", err);
    for (size_t j = 0; j < ld_njobs; j++)
        CHECK(ld_job_check(ld_jobs[j], err, sizeof err) == 0, "job %s: %s",
              ld_jobs[j]->name, err);
    CHECK(ld_jobs_check(err, sizeof err) == 0, "ld_jobs_check: %s", err);
}

int main(void)
{
    check_twins();
    check_own_tasks();
    check_passes();
    return failures != 0;
}
