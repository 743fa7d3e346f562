/* options.c: a table of options, one parser for all of them, and the checks between
 * them. A bad value names the option, what it got, and what it takes. */
#include "options.h"

#include "gt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum kind {
    K_U64,
    K_U32,
    K_DOUBLE,
    K_STRING,
    K_FLAG,
    K_KERNEL,
    K_STACK_MODE,
    K_PARTITION,
    K_JOBS,
    K_STRATEGIES
};

typedef struct option {
    const char *name;
    enum kind kind;
    size_t offset; /* into ld_options */
    double min, max;
    const char *metavar;
    const char *help;
} option;

#define AT(field) offsetof(ld_options, field)

/* The largest run one rank can hold: beyond it the book alone outgrows a node. Whether
 * the node has the memory for the trades each rank gets is checked before the run. */
#define LD_TRADES_MAX 100000000.0

static const option options[] = {
    {"trades", K_U64, AT(trades), 1, LD_TRADES_MAX, "N",
     "trades in the book, split across the ranks (default 8000)"},
    {"seed", K_U64, AT(seed), 0, 18446744073709551615.0, "S",
     "seed of the book and of every trade's PCG streams (default 42)"},
    {"sims", K_U32, AT(sims), 1, 100000000, "N",
     "var: Monte Carlo simulations per trade (default 20000)"},
    {"jobs", K_JOBS, 0, 0, 0, "LIST",
     "jobs to run, comma-separated (default settle,var)"},
    {"strategies", K_STRATEGIES, 0, 0, 0, "LIST",
     "strategies to run, as name or job/name, comma-separated (default all)"},
    {"latency-scale", K_DOUBLE, AT(latency_scale), 1e-6, 1000, "X",
     "settle: multiply every call latency by X (default 1; tests use 0.02)"},
    {"fail-rate", K_DOUBLE, AT(fail_rate), 0, 1, "P",
     "settle: probability that each check fails (default 0.002)"},
    {"pin-fraction", K_DOUBLE, AT(pin_fraction), 0, 1, "F",
     "settle: share of trades that take the monitor in green-pinned and green-monitor "
     "(default 0.01: enough to show the collapse in seconds)"},
    {"pool-size", K_U32, AT(pool_size), 1, 100000, "N",
     "settle threads: OS threads in the pool, per rank (default 200)"},
    {"carriers", K_U32, AT(carriers), 1, LD_CPUS_MAX, "N",
     "carrier threads for green threads and callbacks (default: the rank's CPUs)"},
    {"workers", K_U32, AT(workers), 1, LD_CPUS_MAX, "N",
     "var pool and steal: pinned workers (default: the rank's CPUs)"},
    {"stack-size", K_U32, AT(stack_kib), 16, 65536, "KIB",
     "usable stack of each green thread in KiB (default 64); in copy mode, of each "
     "carrier's one stack"},
    {"stack-mode", K_STACK_MODE, AT(stack_mode), 0, 0, "copy|own",
     "green threads: share one stack per carrier and copy each thread's frames out and "
     "back at a switch, as Loom does, or give each thread a stack of its own "
     "(default copy where the build's context switch allows it)"},
    {"var-kernel", K_KERNEL, AT(var_kernel), 0, 0, "sort|select",
     "var: sort every P&L (the study's way) or select the quantile (default sort)"},
    {"partition", K_PARTITION, AT(partition), 0, 0, "block|cyclic",
     "how rank 0 deals trades to ranks (default block)"},
    {"warmup", K_U32, AT(warmup), 0, 1000, "N",
     "discarded iterations of each strategy before the measured ones (default 0)"},
    {"iterations", K_U32, AT(iterations), 1, 1000, "N",
     "measured iterations of each strategy; 3 or more give a 99.9% CI (default 1)"},
    {"output", K_STRING, AT(output), 0, 0, "FILE",
     "HDF5 results file (default loomdist.h5)"},
    {"trace-pinning", K_FLAG, AT(trace_pinning), 0, 0, NULL,
     "report each carrier a green thread blocked past --trace-threshold, with the green "
     "thread's backtrace (as -Djdk.tracePinnedThreads=full)"},
    {"trace-threshold", K_DOUBLE, AT(trace_threshold_ms), 0.1, 1e6, "MS",
     "what --trace-pinning counts as blocked, in ms (default 10)"},
    {"cold-stacks", K_FLAG, AT(cold_stacks), 0, 0, NULL,
     "green strategies: do not reserve and fault in a stack (in copy mode, a chunk) per "
     "trade before the clock starts, so the run pays for its page faults"},
    {"micro-max", K_U64, AT(micro_max), 1, 10000000, "N",
     "micro: most green threads one figure uses (default 1000000)"},
    /* Test-only, so no help text and no line in --help: the faults of tests/fault. */
    {"test-slow-rank", K_U32, AT(test_slow_rank), 0, 2147483647.0, "RANK", NULL},
    {"test-slow-factor", K_DOUBLE, AT(test_slow_factor), 1, 1000, "X", NULL},
    {"test-overflow-rank", K_U32, AT(test_overflow_rank), 0, 2147483647.0, "RANK", NULL},
    {"quiet", K_FLAG, AT(quiet), 0, 0, NULL, "print only the results table"},
    {"help", K_FLAG, 0, 0, 0, NULL, "print this help and exit"},
    {"version", K_FLAG, 0, 0, 0, NULL, "print the version and git commit and exit"},
};
#define NOPTIONS (sizeof options / sizeof options[0])

static void defaults(ld_options *o)
{
    memset(o, 0, sizeof *o);
    o->trades = 8000;
    o->seed = 42;
    o->sims = 20000;
    o->latency_scale = 1.0;
    o->fail_rate = 0.002;
    o->pin_fraction = 0.01;
    o->pool_size = 200;
    o->stack_kib = LD_GT_STACK_DEFAULT / 1024;
    o->stack_mode = ld_stack_mode_supported(LD_STACK_COPY) ? LD_STACK_COPY : LD_STACK_OWN;
    o->iterations = 1;
    o->trace_threshold_ms = 10;
    o->micro_max = 1000000;
    o->test_slow_rank = UINT32_MAX;
    o->test_slow_factor = 1;
    o->test_overflow_rank = UINT32_MAX;
    strcpy(o->output, "loomdist.h5");
    for (size_t j = 0; j < ld_njobs && j < LD_MAX_JOBS; j++)
        o->selected[j] =
            ld_jobs[j]->opt_in ? 0 : (uint32_t)((1ull << ld_jobs[j]->nstrategies) - 1);
}

/* The message quotes what the user typed, which may hold a newline or a terminal
 * escape: each control character shows as '?', so the message stays one line. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    for (char *c = err; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return -EINVAL;
}

/* The largest value of a whole-number option, exactly: a double rounds 2^64 - 1 up. */
static unsigned long long count_max(const option *opt)
{
    return opt->max >= 18446744073709551615.0 ? ULLONG_MAX : (unsigned long long)opt->max;
}

/* A whole-number option: digits only, no sign, no suffix, within [min, max]. */
static int parse_count(const option *opt, const char *v, uint64_t *out, char *err,
                       size_t errlen)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*v < '0' || *v > '9' || *end != '\0')
        return fail(err, errlen, "--%s takes a whole number, not '%s'", opt->name, v);
    if (errno == ERANGE || (double)x > opt->max)
        return fail(err, errlen, "--%s %s is too large: at most %llu", opt->name, v,
                    count_max(opt));
    if ((double)x < opt->min)
        return fail(err, errlen, "--%s must be at least %.0f, not %s", opt->name,
                    opt->min, v);
    *out = x;
    return 0;
}

static int parse_double(const option *opt, const char *v, double *out, char *err,
                        size_t errlen)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(x))
        return fail(err, errlen, "--%s takes a number, not '%s'", opt->name, v);
    if (x < opt->min || x > opt->max)
        return fail(err, errlen, "--%s must be between %g and %g, not %s", opt->name,
                    opt->min, opt->max, v);
    *out = x;
    return 0;
}

/* Pick one of a few names, e.g. sort|select; the index is the enum value. */
static int parse_choice(const option *opt, const char *v, const char *const *names, int n,
                        int *out, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(v, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return fail(err, errlen, "--%s takes %s, not '%s'", opt->name, opt->metavar, v);
}

/* "settle, var, micro": every job's name, for messages. */
static void job_names(char *out, size_t len)
{
    out[0] = '\0';
    for (size_t j = 0; j < ld_njobs; j++) {
        if (j)
            strncat(out, ", ", len - strlen(out) - 1);
        strncat(out, ld_jobs[j]->name, len - strlen(out) - 1);
    }
}

/* --jobs settle,var: a job left out gets no strategy at all; one named gets all of its
 * strategies, an opt-in job too. */
static int parse_jobs(ld_options *o, const char *v, char *err, size_t errlen)
{
    uint32_t keep[LD_MAX_JOBS] = {0};
    char list[256];
    if (strlen(v) >= sizeof list || *v == '\0')
        return fail(err, errlen, "--jobs takes a list such as settle,var, not '%s'", v);
    strcpy(list, v);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        const ld_job *job = ld_job_find(name);
        if (!job) {
            char names[128];
            job_names(names, sizeof names);
            return fail(err, errlen, "--jobs: unknown job '%s' (jobs: %s)", name, names);
        }
        size_t j = 0;
        while (ld_jobs[j] != job)
            j++;
        keep[j] = 1;
    }
    for (size_t j = 0; j < ld_njobs; j++)
        o->selected[j] = keep[j] ? (uint32_t)((1ull << ld_jobs[j]->nstrategies) - 1) : 0;
    return 0;
}

/* One --strategies item: "green" selects green in every job that has it, and
 * "var/green" only var's. Returns the number of strategies it matched. */
static int select_strategy(uint32_t *sel, const char *item)
{
    const char *slash = strchr(item, '/');
    int matched = 0;
    for (size_t j = 0; j < ld_njobs; j++) {
        const ld_job *job = ld_jobs[j];
        const char *sname = item;
        if (slash) {
            size_t len = (size_t)(slash - item);
            if (strlen(job->name) != len || strncmp(job->name, item, len) != 0)
                continue;
            sname = slash + 1;
        }
        const ld_strategy *s = ld_job_strategy(job, sname);
        if (s) {
            sel[j] |= 1u << (s - job->strategies);
            matched++;
        }
    }
    return matched;
}

static int parse_strategies(uint32_t *sel, const char *v, char *err, size_t errlen)
{
    char list[512];
    if (strlen(v) >= sizeof list || *v == '\0')
        return fail(err, errlen, "--strategies takes a list such as green,pool, not '%s'",
                    v);
    strcpy(list, v);
    memset(sel, 0, LD_MAX_JOBS * sizeof *sel);
    char *save = NULL;
    for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (select_strategy(sel, item) == 0)
            return fail(err, errlen,
                        "--strategies: unknown strategy '%s' (see --help for the list)",
                        item);
    return 0;
}

static int apply(ld_options *o, uint32_t *strategies, int *have_strategies,
                 const option *opt, const char *v, char *err, size_t errlen)
{
    static const char *const kernels[] = {"sort", "select"};
    static const char *const partitions[] = {"block", "cyclic"};
    static const char *const stack_modes[] = {"own", "copy"}; /* enum ld_stack_mode */
    char *field = (char *)o + opt->offset;
    uint64_t n = 0;
    int rc;
    if (!v && opt->kind != K_FLAG)
        return fail(err, errlen, "--%s needs a value (%s)", opt->name, opt->metavar);
    switch (opt->kind) {
    case K_U64:
        if ((rc = parse_count(opt, v, &n, err, errlen)) == 0)
            memcpy(field, &n, sizeof n);
        return rc;
    case K_U32:
        if ((rc = parse_count(opt, v, &n, err, errlen)) == 0)
            *(uint32_t *)(void *)field = (uint32_t)n;
        return rc;
    case K_DOUBLE:
        return parse_double(opt, v, (double *)(void *)field, err, errlen);
    case K_STRING:
        if (*v == '\0' || strlen(v) >= LD_OUTPUT_MAX)
            return fail(err, errlen, "--%s takes a file name of 1 to %d bytes", opt->name,
                        LD_OUTPUT_MAX - 1);
        strcpy(field, v);
        return 0;
    case K_KERNEL:
        return parse_choice(opt, v, kernels, 2, (int *)(void *)field, err, errlen);
    case K_STACK_MODE:
        if ((rc =
                 parse_choice(opt, v, stack_modes, 2, (int *)(void *)field, err, errlen)))
            return rc;
        if (!ld_stack_mode_supported(*(enum ld_stack_mode *)(void *)field))
            return fail(err, errlen,
                        "--stack-mode %s needs the assembly context switch, and this "
                        "build uses ucontext: use --stack-mode own",
                        v);
        return 0;
    case K_PARTITION:
        return parse_choice(opt, v, partitions, 2, (int *)(void *)field, err, errlen);
    case K_JOBS:
        return parse_jobs(o, v, err, errlen);
    case K_STRATEGIES:
        *have_strategies = 1;
        return parse_strategies(strategies, v, err, errlen);
    case K_FLAG:
        break;
    }
    *(int *)(void *)field = 1;
    return 0;
}

static const option *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < NOPTIONS; i++)
        if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
            return &options[i];
    return NULL;
}

/* Checks that need more than one option: a strategy list that leaves a selected job
 * with nothing to run. */
static int check_together(ld_options *o, const uint32_t *strategies, int have_strategies,
                          char *err, size_t errlen)
{
    int any = 0;
    for (size_t j = 0; j < ld_njobs; j++) {
        if (have_strategies && o->selected[j])
            o->selected[j] = strategies[j];
        any |= o->selected[j] != 0;
    }
    if (!any)
        return fail(err, errlen,
                    "--jobs and --strategies select nothing to run: pick strategies of "
                    "the jobs you ask for");
    return 0;
}

enum ld_options_verdict ld_options_parse(ld_options *o, int argc, char *const *argv,
                                         char *err, size_t errlen)
{
    uint32_t strategies[LD_MAX_JOBS] = {0};
    int have_strategies = 0, help = 0, version = 0;
    defaults(o);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            fail(err, errlen, "unexpected argument '%s': options start with --", arg);
            return LD_OPTIONS_INVALID;
        }
        const char *eq = strchr(arg + 2, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        const option *opt = find_option(arg + 2, len);
        if (!opt) {
            fail(err, errlen, "unknown option '%.*s' (try --help)", (int)(len + 2), arg);
            return LD_OPTIONS_INVALID;
        }
        if (strcmp(opt->name, "help") == 0 || strcmp(opt->name, "version") == 0) {
            *(opt->name[0] == 'h' ? &help : &version) = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : NULL;
        if (opt->kind != K_FLAG && !v) {
            if (i + 1 >= argc) {
                fail(err, errlen, "--%s needs a value (%s)", opt->name, opt->metavar);
                return LD_OPTIONS_INVALID;
            }
            v = argv[++i];
        } else if (opt->kind == K_FLAG && v) {
            fail(err, errlen, "--%s takes no value", opt->name);
            return LD_OPTIONS_INVALID;
        }
        if (apply(o, strategies, &have_strategies, opt, v, err, errlen) != 0)
            return LD_OPTIONS_INVALID;
    }
    if (help)
        return LD_OPTIONS_HELP;
    if (version)
        return LD_OPTIONS_VERSION;
    if (check_together(o, strategies, have_strategies, err, errlen) != 0)
        return LD_OPTIONS_INVALID;
    return LD_OPTIONS_RUN;
}

/* Whether a test-only fault aimed at `target` falls on the rank these options run on. */
static int aimed_here(const ld_options *o, unsigned target)
{
    return o->rank >= 0 && (unsigned)o->rank == target;
}

void ld_options_job_config(const ld_options *o, const ld_cpus *cpus, ld_job_config *cfg)
{
    double slow = aimed_here(o, o->test_slow_rank) ? o->test_slow_factor : 1;
    *cfg = (ld_job_config){
        .seed = o->seed,
        .sims = o->sims,
        .latency_scale = o->latency_scale * slow,
        .fail_rate = o->fail_rate,
        .pin_fraction = o->pin_fraction,
        .pool_size = o->pool_size,
        .carriers = o->carriers,
        .workers = o->workers,
        .stack_size = (size_t)o->stack_kib * 1024,
        .stack_mode = o->stack_mode,
        .var_kernel = o->var_kernel,
        .trace_pinning_ns = o->trace_pinning ? (int64_t)(o->trace_threshold_ms * 1e6) : 0,
        .micro_max = (size_t)o->micro_max,
        .cold_stacks = o->cold_stacks,
        .test_overflow = aimed_here(o, o->test_overflow_rank),
        .cpus = cpus,
    };
}

static void usage_jobs(FILE *out)
{
    fprintf(out, "\nJobs and their strategies:\n");
    for (size_t j = 0; j < ld_njobs; j++) {
        fprintf(out, "  %s: %s\n", ld_jobs[j]->name, ld_jobs[j]->summary);
        for (size_t s = 0; s < ld_jobs[j]->nstrategies; s++)
            fprintf(out, "    %-14s %s\n", ld_jobs[j]->strategies[s].name,
                    ld_jobs[j]->strategies[s].summary);
    }
}

void ld_options_usage(FILE *out)
{
    fprintf(out, "Usage: mpirun -n RANKS loomdist [OPTIONS]\n"
                 "       loomdist [OPTIONS]            (one rank, no mpirun)\n\n"
                 "Rank 0 builds a book of trades and scatters it; every rank runs each\n"
                 "selected strategy on its share, and the results go into one HDF5 file\n"
                 "written collectively, renamed into place only when complete.\n\n"
                 "Options (--name VALUE or --name=VALUE):\n");
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (!options[i].help)
            continue; /* test-only */
        char lhs[64];
        snprintf(lhs, sizeof lhs, "--%s%s%s", options[i].name,
                 options[i].metavar ? " " : "",
                 options[i].metavar ? options[i].metavar : "");
        fprintf(out, "  %-26s %s\n", lhs, options[i].help);
    }
    usage_jobs(out);
    fprintf(out,
            "\nMemory: the green strategies keep one green thread per trade. In copy\n"
            "mode (the default) a parked thread is a 512-byte chunk holding its\n"
            "struct and frozen frames, plus about 0.5 KiB of per-trade state: N\n"
            "trades on one rank need about N x 1 KiB (1,000,000 trades: about\n"
            "1 GiB; 8,000: 8 MiB), and each carrier maps one --stack-size stack.\n"
            "With --stack-mode own each thread keeps one 4 KiB page of its stack\n"
            "resident: about N x 4.6 KiB (1,000,000 trades: about 4.3 GiB), plus\n"
            "--stack-size of virtual memory per thread. Neither needs a sysctl: past\n"
            "what vm.max_map_count allows for guard pages, own stacks are\n"
            "canary-checked. A run whose trades need more than 90%% of MemAvailable\n"
            "(or of the cgroup's memory.max) fails before it starts, naming the\n"
            "limit. micro needs --micro-max x 4.5 KiB.\n");
    fprintf(out,
            "\nExit status: 0 on success, 2 for a bad option or an output that cannot\n"
            "be written, 1 for a failure during the run.\n");
}

void ld_options_version(FILE *out)
{
    fprintf(out, "loomdist %s (git %s)\n", LD_VERSION, LD_GIT_COMMIT);
}
