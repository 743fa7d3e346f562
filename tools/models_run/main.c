/* loomdist-models-run: one measured run of a models strategy in a process of its own,
 * so that a memory limit bounds it alone and an OOM kill ends it, not the rank.
 *
 * The rank that starts it (jobs/models/models_apart.c) hands it the run's settings as
 * options. It takes the CPUs and memory asked (profile.h), says what it was granted
 * in a "ready" line, measures the strategy once as the harness measures it in the
 * rank, says what it measured in a "done" line (models.h gives both forms), and
 * exits 0.
 */
#include <getopt.h>
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

/* "0,1,5": the CPUs offered, each a number below LD_CPUS_MAX. */
static void parse_cpu_ids(const char *arg, ld_cpus *out)
{
    char copy[8192], *save = NULL;
    if (strlen(arg) >= sizeof copy)
        ld_cli_bad("--cpu-ids is too long");
    strcpy(copy, arg);
    out->n = 0;
    for (char *id = strtok_r(copy, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
        if (out->n == LD_CPUS_MAX)
            ld_cli_bad("--cpu-ids names more than %d CPUs", LD_CPUS_MAX);
        out->id[out->n++] = (int)ld_cli_count("--cpu-ids", id, 0, LD_CPUS_MAX - 1);
    }
    if (out->n == 0)
        ld_cli_bad("--cpu-ids takes a comma-separated list of CPUs, not '%s'", arg);
}

static double parse_ms(const char *arg)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !(v >= 0.001 && v <= 100000))
        ld_cli_bad("--delay-ms takes a number of ms in [0.001, 100000], not '%s'", arg);
    return v;
}

static void parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"strategy", 1, 0, 's'},   {"tasks", 1, 0, 't'},      {"delay-ms", 1, 0, 'd'},
        {"thread-cap", 1, 0, 'T'}, {"carriers", 1, 0, 'c'},   {"workers", 1, 0, 'w'},
        {"stack-size", 1, 0, 'S'}, {"stack-mode", 1, 0, 'm'}, {"cold-stacks", 0, 0, 'k'},
        {"trace-ns", 1, 0, 'r'},   {"cpu-ids", 1, 0, 'i'},    {"cpus", 1, 0, 'C'},
        {"mem-limit", 1, 0, 'M'},  {"help", 0, 0, 'h'},       {0, 0, 0, 0}};
    for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (o) {
        case 's':
            a->strategy = ld_job_strategy(&ld_models_job, optarg);
            if (!a->strategy)
                ld_cli_bad("--strategy: the models job has no strategy '%s'", optarg);
            break;
        case 't':
            a->mc.tasks = ld_cli_count("--tasks", optarg, 1, 10000000);
            break;
        case 'd':
            a->mc.delay_ms = parse_ms(optarg);
            break;
        case 'T':
            a->mc.thread_cap = ld_cli_count("--thread-cap", optarg, 1, LD_CPUS_MAX);
            break;
        case 'c':
            a->cfg.carriers =
                (unsigned)ld_cli_count("--carriers", optarg, 0, LD_CPUS_MAX);
            break;
        case 'w':
            a->cfg.workers = (unsigned)ld_cli_count("--workers", optarg, 0, LD_CPUS_MAX);
            break;
        case 'S':
            a->cfg.stack_size = (size_t)ld_cli_count("--stack-size", optarg, 0, 1u << 26);
            break;
        case 'm':
            if (strcmp(optarg, "copy") != 0 && strcmp(optarg, "own") != 0)
                ld_cli_bad("--stack-mode is copy or own, not '%s'", optarg);
            a->cfg.stack_mode = optarg[0] == 'c' ? LD_STACK_COPY : LD_STACK_OWN;
            break;
        case 'k':
            a->cfg.cold_stacks = 1;
            break;
        case 'r':
            a->cfg.trace_pinning_ns =
                (int64_t)ld_cli_count("--trace-ns", optarg, 0, UINT64_C(1) << 50);
            break;
        case 'i':
            parse_cpu_ids(optarg, &a->offered);
            break;
        case 'C':
            a->cpus = (unsigned)ld_cli_count("--cpus", optarg, 0, LD_CPUS_MAX);
            break;
        case 'M':
            a->mem_limit = ld_cli_count("--mem-limit", optarg, 0, UINT64_C(1) << 50);
            break;
        case 'h':
            fputs(usage, stdout);
            exit(0);
        default:
            ld_cli_bad("unknown option");
        }
    }
    if (optind < argc)
        ld_cli_bad("unexpected argument '%s'", argv[optind]);
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
