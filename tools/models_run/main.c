/* loomdist-models-run: one measured run of a models strategy in a process of its own,
 * so that a memory limit bounds it alone and an OOM kill ends it, not the rank.
 *
 * The rank that starts it (jobs/models/models_apart.c) hands it the run's settings as
 * options. It takes the CPUs and memory asked (profile.h), says what it was granted
 * in a "ready" line, measures the strategy once as the harness measures it in the
 * rank, says what it measured in a "done" line (models.h gives both forms), and
 * exits 0.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carriers.h"
#include "cli.h"
#include "confine.h"
#include "metrics.h"
#include "models.h"
#include "why.h"

#define NAME "loomdist-models-run"

static const char usage[] =
    "usage: " NAME " --strategy NAME --cpu-ids LIST [options]\n"
    "One measured run of a strategy of loomdist's models job, in a process of its own\n"
    "under the CPUs and memory limit asked. Started by loomdist --jobs models when the\n"
    "job runs under a memory limit; it prints a ready line, then a done line.\n\n"
    "  --strategy NAME     threads, green, stackless, hybrid or stackless-blocking\n"
    "  --tasks N           tasks of the operation (default 1000)\n"
    "  --delay-ms MS       each task's wait (default 10)\n"
    "  --thread-cap N      threads: the pool's size (default 1000)\n"
    "  --carriers N        carrier threads (default: one per CPU granted)\n"
    "  --workers N         pinned workers (default: one per CPU granted)\n"
    "  --stack-size BYTES  green threads' stacks (default 65536)\n"
    "  --stack-mode M      copy or own (default copy)\n"
    "  --cold-stacks       reserve no stacks before the clock\n"
    "  --trace-ns NS       report carriers blocked longer than this (default 0: off)\n"
    "  --cpu-ids LIST      the CPUs offered, comma-separated OS numbers (required)\n"
    "  --cpus N            of them, the first N (default: all)\n"
    "  --mem-limit BYTES   a memory cgroup's limit (default: none)\n";

typedef struct args {
    ld_models_config mc;
    ld_job_config cfg;
    ld_cpus offered;
    const ld_strategy *strategy;
    unsigned cpus;
    uint64_t mem_limit;
} args;

/* "0,1,5": the CPUs offered, each a number below LD_CPUS_MAX, into the ld_cpus at
 * where. */
static void take_cpu_ids(const char *name, const char *arg, void *where)
{
    ld_cpus *out = where;
    char copy[8192], *save = NULL;
    if (strlen(arg) >= sizeof copy)
        ld_cli_bad("%s is too long", name);
    strcpy(copy, arg);
    out->n = 0;
    for (char *id = strtok_r(copy, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
        if (out->n == LD_CPUS_MAX)
            ld_cli_bad("%s names more than %d CPUs", name, LD_CPUS_MAX);
        out->id[out->n++] = (int)ld_cli_count(name, id, 0, LD_CPUS_MAX - 1);
    }
    if (out->n == 0)
        ld_cli_bad("%s takes a comma-separated list of CPUs, not '%s'", name, arg);
}

/* A strategy of the models job, by name, into the strategy pointer at where. */
static void take_strategy(const char *name, const char *arg, void *where)
{
    const ld_strategy *s = ld_job_strategy(&ld_models_job, arg);
    if (!s)
        ld_cli_bad("%s: the models job has no strategy '%s'", name, arg);
    *(const ld_strategy **)where = s;
}

static const ld_cli_choice stack_modes[] = {
    {"copy", LD_STACK_COPY}, {"own", LD_STACK_OWN}, {NULL, 0}};

/* Every option into a; --help exits 0, a bad one 2. */
static void parse_args(int argc, char **argv, args *a)
{
    const ld_cli_opt opts[] = {
        LD_CLI_OPT_CALL("strategy", &a->strategy, take_strategy),
        LD_CLI_OPT_COUNT("tasks", &a->mc.tasks, 1, 10000000),
        LD_CLI_OPT_MS("delay-ms", &a->mc.delay_ms, 0.001, 100000),
        LD_CLI_OPT_COUNT("thread-cap", &a->mc.thread_cap, 1, LD_CPUS_MAX),
        LD_CLI_OPT_COUNT("carriers", &a->cfg.carriers, 0, LD_CPUS_MAX),
        LD_CLI_OPT_COUNT("workers", &a->cfg.workers, 0, LD_CPUS_MAX),
        LD_CLI_OPT_COUNT("stack-size", &a->cfg.stack_size, 0, 1u << 26),
        LD_CLI_OPT_CHOICE("stack-mode", &a->cfg.stack_mode, stack_modes),
        LD_CLI_OPT_FLAG("cold-stacks", &a->cfg.cold_stacks),
        LD_CLI_OPT_COUNT("trace-ns", &a->cfg.trace_pinning_ns, 0, UINT64_C(1) << 50),
        LD_CLI_OPT_CALL("cpu-ids", &a->offered, take_cpu_ids),
        LD_CLI_OPT_COUNT("cpus", &a->cpus, 0, LD_CPUS_MAX),
        LD_CLI_OPT_COUNT("mem-limit", &a->mem_limit, 0, UINT64_C(1) << 50),
        {.name = NULL},
    };
    const ld_cli_spec spec = {usage, opts, 0, 0};

    ld_cli_parse(&spec, argc, argv);
    if (!a->strategy || a->offered.n == 0)
        ld_cli_bad("--strategy and --cpu-ids are required");
}

static int start_nothing(unsigned carrier, ld_sched *s, void *ctx)
{
    (void)carrier;
    (void)s;
    (void)ctx;
    return 0;
}

/* The strategy measured once, by the harness, as the rank would: with what a strategy
 * keeps across its runs (ld_job_strategy_open), as the driver gives each one, and
 * the stacks its tasks need reserved by the harness; the profile is this whole
 * process's, entered once, so the job's enter and leave are not called. A process
 * measures one run, so it first makes its carriers and runs the operation once
 * untimed, as the rank's earlier iterations would have: a carrier's start, the first
 * touch of the code and the allocator's first arenas are not what a run measures. */
static int measure(const args *a, const ld_job_config *cfg, ld_metrics *m, ld_figures *f)
{
    ld_job job = ld_models_job;
    job.enter = NULL;
    job.leave = NULL;
    job.measure_apart = NULL;
    ld_job_config run = *cfg;
    char result = 0;
    int rc = ld_job_strategy_open(&run);
    if (rc == 0 && a->strategy->threading != LD_ON_OWN)
        rc = ld_carriers_run(&run, start_nothing, NULL);
    if (rc == 0)
        rc = ld_job_measure(&job, a->strategy, &run, NULL, 0, NULL, &result, m, f);
    if (rc == 0)
        rc = ld_job_measure(&job, a->strategy, &run, NULL, 0, NULL, &result, m, f);
    ld_job_strategy_close(&run);
    return rc;
}

/* The done line: the run's error, metrics, the group's peak, figures, and why. */
static void say_done(int rc, const ld_metrics *m, const ld_confine *p,
                     const ld_figures *f)
{
    char why[LD_WHY_MAX] = "";
    printf(LD_MODELS_DONE_LINE, rc);
    for (size_t k = 0; k < LD_METRICS_N; k++)
        printf("%s%" PRId64, k ? "," : "", ld_metrics_get(m, k));
    printf(" peak=%" PRIu64 " figures=", ld_confine_mem_peak(p));
    for (size_t k = 0; k < f->n; k++)
        printf("%s%s:%.17g", k ? "," : "", f->v[k].name, f->v[k].value);
    if (rc != 0)
        ld_why_get(why, sizeof why);
    printf(" why=%s\n", why);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    args a = {.mc = {.tasks = 1000, .delay_ms = 10, .thread_cap = 1000},
              .cfg = {.stack_size = LD_GT_STACK_DEFAULT,
                      .stack_mode = LD_STACK_COPY,
                      .slow_factor = 1}};
    ld_cli_program = NAME;
    parse_args(argc, argv, &a);
    ld_confine p;
    int rc = ld_confine_enter(&p, &a.offered, a.cpus, a.mem_limit);
    if (rc != 0) {
        fprintf(stderr, NAME ": cannot take the CPUs asked for: %s\n", strerror(-rc));
        return 1;
    }
    printf(LD_MODELS_READY_LINE "\n", p.cpus.n, a.cpus ? a.cpus : a.offered.n,
           p.mem_limit, a.mem_limit, p.clamped);
    fflush(stdout);
    a.cfg.opts = &a.mc;
    a.cfg.cpus = &p.cpus;
    ld_metrics m = {0};
    ld_figures f = {.n = 0};
    rc = measure(&a, &a.cfg, &m, &f);
    say_done(rc, &m, &p, &f);
    rc = ld_confine_leave(&p);
    if (rc != 0)
        fprintf(stderr, NAME ": could not give the profile back: %s\n", strerror(-rc));
    return rc != 0;
}
