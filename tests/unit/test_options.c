/* test_options.c: every bad command line gets its exact message; good ones parse. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpus.h"
#include "gt.h"
#include "models.h"
#include "options.h"
#include "pool.h"
#include "settle.h"
#include "var.h"

typedef struct bad_case {
    const char *args[4];
    const char *message;
} bad_case;

/* Each case: the arguments after the program name, and the whole message expected. */
static const bad_case bad[] = {
    {{"--bogus"}, "unknown option '--bogus' (try --help)"},
    {{"--trades=5", "--tardes", "9"}, "unknown option '--tardes' (try --help)"},
    {{"trades"}, "unexpected argument 'trades': options start with --"},
    {{"-n", "4"}, "unexpected argument '-n': options start with --"},
    {{"--trades", "0"}, "--trades must be at least 1, not 0"},
    {{"--trades", "-5"}, "--trades takes a whole number, not '-5'"},
    {{"--trades", "abc"}, "--trades takes a whole number, not 'abc'"},
    {{"--trades", "12k"}, "--trades takes a whole number, not '12k'"},
    {{"--trades", "1e6"}, "--trades takes a whole number, not '1e6'"},
    {{"--trades", ""}, "--trades takes a whole number, not ''"},
    {{"--trades"}, "--trades needs a value (N)"},
    {{"--trades", "100000001"}, "--trades 100000001 is too large: at most 100000000"},
    {{"--trades", "99999999999999999999999"},
     "--trades 99999999999999999999999 is too large: at most 100000000"},
    {{"--sims", "0"}, "--sims must be at least 1, not 0"},
    {{"--sims", "4294967296"}, "--sims 4294967296 is too large: at most 100000000"},
    {{"--os-threads", "-1"}, "--os-threads takes a whole number, not '-1'"},
    {{"--os-threads", "0"}, "--os-threads must be at least 1, not 0"},
    {{"--pool-size", "8"}, "unknown option '--pool-size' (try --help)"},
    /* A job's option is refused when its job does not run, naming the job. */
    {{"--jobs", "settle", "--sims", "500"},
     "--sims is an option of the var job, which this run does not select: add it to "
     "--jobs, or drop the option"},
    {{"--micro-max", "10"},
     "--micro-max is an option of the micro job, which this run does not select: add "
     "it to --jobs, or drop the option"},
    {{"--latency-scale=2", "--jobs", "var"},
     "--latency-scale is an option of the settle job, which this run does not select: "
     "add it to --jobs, or drop the option"},
    /* 0 is no count of CPUs or bytes; two options that contradict are named both. */
    {{"--jobs", "models", "--cpus", "0"}, "--cpus must be at least 1, not 0"},
    {{"--jobs", "pool", "--mem-limit", "0"}, "--mem-limit must be at least 1, not 0"},
    {{"--jobs", "pool", "--study-phases", "--measure-s=5"},
     "--study-phases and --measure-s contradict each other (--study-phases measures "
     "for 30 s): give one of them"},
    {{"--jobs", "pool", "--warmup-s=1", "--study-phases"},
     "--study-phases and --warmup-s contradict each other (--study-phases warms up "
     "for 30 s): give one of them"},
    {{"--trace-threshold", "5"},
     "--trace-threshold does nothing without --trace-pinning: add --trace-pinning, or "
     "drop --trace-threshold"},
    /* A shared option is refused only when no job that declares it runs. */
    {{"--jobs", "settle", "--mem-limit", "1000"},
     "--mem-limit is an option of the models job, which this run does not select: add "
     "it to --jobs, or drop the option"},
    {{"--iterations", "0"}, "--iterations must be at least 1, not 0"},
    {{"--stack-size", "4"}, "--stack-size must be at least 16, not 4"},
    {{"--latency-scale", "0"}, "--latency-scale must be between 1e-06 and 1000, not 0"},
    {{"--latency-scale", "nan"}, "--latency-scale takes a number, not 'nan'"},
    {{"--latency-scale", "fast"}, "--latency-scale takes a number, not 'fast'"},
    {{"--pin-fraction", "1.5"}, "--pin-fraction must be between 0 and 1, not 1.5"},
    {{"--var-kernel", "quick"}, "--var-kernel takes sort|select, not 'quick'"},
    {{"--partition", "round"}, "--partition takes block|cyclic|ranges, not 'round'"},
    {{"--stack-mode", "shared"}, "--stack-mode takes copy|own, not 'shared'"},
    {{"--jobs", "settle,foo"},
     "--jobs: unknown job 'foo' (jobs: settle, var, micro, models, pool, mixed)"},
    {{"--strategies", "gren"},
     "--strategies: unknown strategy 'gren' (see --help for the list)"},
    {{"--strategies", "settle/pool"},
     "--strategies: unknown strategy 'settle/pool' (see --help for the list)"},
    {{"--jobs", "settle", "--strategies", "pool"},
     "--jobs and --strategies select nothing to run: pick strategies of the jobs you ask "
     "for"},
    {{"--output", ""}, "--output takes a file name of 1 to 4095 bytes"},
    {{"--quiet=yes"}, "--quiet takes no value"},
    /* What is quoted back shows control characters as '?': the message is one line. */
    {{"--trades", "1\n2"}, "--trades takes a whole number, not '1?2'"},
    {{"--tar\033[2Jdes"}, "unknown option '--tar?[2Jdes' (try --help)"},
    {{"--seed", "18446744073709551616"},
     "--seed 18446744073709551616 is too large: at most 18446744073709551615"},
    {{"--latency-scale", "1e400"}, "--latency-scale takes a number, not '1e400'"},
    {{"--latency-scale="}, "--latency-scale takes a number, not ''"},
    {{"--fail-rate", "-0.1"}, "--fail-rate must be between 0 and 1, not -0.1"},
    {{"--iterations", "1001"}, "--iterations 1001 is too large: at most 1000"},
    {{"--warmup", "-1"}, "--warmup takes a whole number, not '-1'"},
    {{"--carriers", "1025"}, "--carriers 1025 is too large: at most 1024"},
    {{"--trace-threshold", "0"},
     "--trace-threshold must be between 0.1 and 1e+06, not 0"},
    {{"--test-slow-factor", "0.5"},
     "--test-slow-factor must be between 1 and 1000, not 0.5"},
    {{"--test-overflow-rank", "-1"},
     "--test-overflow-rank takes a whole number, not '-1'"},
};

static int argc_of(const char *const *args)
{
    int n = 0;
    while (n < 4 && args[n])
        n++;
    return n + 1;
}

static int check_bad(const bad_case *c)
{
    char *argv[6] = {"loomdist"};
    for (int i = 1; i < argc_of(c->args); i++)
        argv[i] = (char *)c->args[i - 1];
    ld_options o;
    char err[512] = "";
    enum ld_options_verdict v =
        ld_options_parse(&o, argc_of(c->args), argv, err, sizeof err);
    if (v != LD_OPTIONS_INVALID || strcmp(err, c->message) != 0) {
        fprintf(stderr, "FAIL %s ...: verdict %d, message '%s'\n  expected '%s'\n",
                c->args[0], (int)v, err, c->message);
        return 1;
    }
    return 0;
}

/* The defaults are the study's: 8,000 trades, 20,000 sims, every strategy; stacks are
 * copied wherever the build can copy them. */
static int check_defaults(void)
{
    char *argv[] = {"loomdist"};
    ld_options o;
    char err[256];
    int fails = 0;
    fails += ld_options_parse(&o, 1, argv, err, sizeof err) != LD_OPTIONS_RUN;
    const ld_settle_config *sc = (const void *)o.job_config[0];
    const ld_var_config *vc = (const void *)o.job_config[1];
    fails += o.trades != 8000 || vc->sims != 20000 || sc->os_threads != 200;
    fails += sc->latency_scale != 1.0 || vc->kernel != LD_VAR_SORT;
    fails += strcmp(o.output, "loomdist.h5") != 0 || o.iterations != 1;
    fails += o.stack_mode !=
             (ld_stack_mode_supported(LD_STACK_COPY) ? LD_STACK_COPY : LD_STACK_OWN);
    for (size_t j = 0; j < ld_njobs; j++)
        fails += o.selected[j] !=
                 (ld_jobs[j]->opt_in ? 0 : (1u << ld_jobs[j]->nstrategies) - 1);
    if (fails)
        fprintf(stderr, "FAIL defaults\n");
    return fails != 0;
}

/* "--strategies green" picks green in both jobs; "var/green" only var's. */
static int check_selection(void)
{
    char *both[] = {"loomdist", "--strategies", "green"};
    char *one[] = {"loomdist", "--strategies=var/green,threads", "--trades=10"};
    ld_options o;
    char err[256];
    int fails = 0;
    fails += ld_options_parse(&o, 3, both, err, sizeof err) != LD_OPTIONS_RUN;
    const ld_job *settle = ld_job_find("settle"), *var = ld_job_find("var");
    uint32_t sg = 1u << (ld_job_strategy(settle, "green") - settle->strategies);
    uint32_t vg = 1u << (ld_job_strategy(var, "green") - var->strategies);
    uint32_t st = 1u << (ld_job_strategy(settle, "threads") - settle->strategies);
    fails += o.selected[0] != sg || o.selected[1] != vg;
    fails += ld_options_parse(&o, 3, one, err, sizeof err) != LD_OPTIONS_RUN;
    fails += o.selected[0] != st || o.selected[1] != vg || o.trades != 10;
    if (fails)
        fprintf(stderr, "FAIL selection\n");
    return fails != 0;
}

static int check_help_version(void)
{
    char *help[] = {"loomdist", "--trades", "5", "--help"};
    char *version[] = {"loomdist", "--version"};
    ld_options o;
    char err[256];
    int fails = ld_options_parse(&o, 4, help, err, sizeof err) != LD_OPTIONS_HELP;
    fails += ld_options_parse(&o, 2, version, err, sizeof err) != LD_OPTIONS_VERSION;
    if (fails)
        fprintf(stderr, "FAIL help/version\n");
    return fails != 0;
}

/* The test-only faults fall on the rank they name and no other, and --help does not
 * show them. */
static int check_test_faults(void)
{
    char *argv[] = {"loomdist", "--test-slow-rank=1", "--test-slow-factor=10",
                    "--test-overflow-rank=1"};
    static const ld_cpus cpus = {.n = 1, .id = {0}};
    ld_options o;
    ld_job_config cfg;
    static char help[1 << 16];
    char err[256];
    int fails = ld_options_parse(&o, 4, argv, err, sizeof err) != LD_OPTIONS_RUN;
    o.rank = 0;
    ld_options_job_config(&o, 0, &cpus, &cfg);
    fails += cfg.slow_factor != 1.0 || cfg.test_overflow != 0;
    o.rank = 1;
    ld_options_job_config(&o, 0, &cpus, &cfg);
    fails += cfg.slow_factor != 10.0 || cfg.test_overflow != 1;
    FILE *f = fmemopen(help, sizeof help - 1, "w");
    if (f) {
        ld_options_usage(f);
        fclose(f);
    }
    fails +=
        f == NULL || strstr(help, "--trades") == NULL || strstr(help, "--test-") != NULL;
    /* --help lists each job's options under the job. */
    const char *settle = strstr(help, "\nJob settle"), *var = strstr(help, "\nJob var");
    const char *sims = strstr(help, "--sims");
    fails +=
        !settle || !var || !sims || sims < var || strstr(help, "--os-threads") < settle;
    if (fails)
        fprintf(stderr, "FAIL test-only faults\n");
    return fails != 0;
}

/* Two jobs may declare one option only as the same option: the parser stores its value
 * in both. */
static int same_choices(const char *const *a, const char *const *b)
{
    for (; a && b && *a && *b; a++, b++)
        if (strcmp(*a, *b) != 0)
            return 0;
    return a == b || (a && b && !*a && !*b);
}

static int same_opt(const ld_opt *a, const ld_opt *b)
{
    return a->type == b->type && a->min == b->min && a->max == b->max &&
           a->def == b->def && same_choices(a->choices, b->choices) &&
           a->flags == b->flags && strcmp(a->help, b->help) == 0;
}

/* The start's check (ld_jobs_check) passes every job, no job option shadows a
 * driver's, and an option two jobs declare is one option. */
static int check_declarations(void)
{
    char err[256];
    int fails = ld_jobs_check(err, sizeof err) != 0;
    size_t ncommon;
    const ld_opt *common = ld_options_common(&ncommon);
    for (size_t j = 0; j < ld_njobs; j++) {
        const ld_job *job = ld_jobs[j];
        for (size_t k = 0; k < job->nopts; k++) {
            for (size_t c = 0; c < ncommon; c++)
                fails += strcmp(job->opts[k].name, common[c].name) == 0;
            for (size_t i = 0; i < j; i++)
                for (size_t q = 0; q < ld_jobs[i]->nopts; q++)
                    fails += strcmp(job->opts[k].name, ld_jobs[i]->opts[q].name) == 0 &&
                             !same_opt(&job->opts[k], &ld_jobs[i]->opts[q]);
        }
        for (size_t a = 0; a < job->ncolumns; a++) /* percentile datasets: p50_<unit> */
            for (size_t b = 0; b < a; b++)
                fails += (job->columns[a].flags & job->columns[b].flags &
                          LD_COL_PERCENTILES) &&
                         strcmp(job->columns[a].unit, job->columns[b].unit) == 0;
        fails += ld_job_reports(job, LD_REPORT_SPEEDUP) &&
                 (!job->baseline || !ld_job_strategy(job, job->baseline));
        fails += ld_job_reports(job, LD_REPORT_BOUND) &&
                 (!job->bound_name || !job->bound_attr);
    }
    if (fails)
        fprintf(stderr, "FAIL declarations: %d problem(s) in the jobs' tables\n", fails);
    return fails != 0;
}

/* The start's check refuses a job past a limit, naming it, and half a declaration of
 * tasks. */
static int check_limits(void)
{
    char err[256];
    ld_job big = ld_models_job, half = ld_models_job, stray = ld_models_job;
    big.config_size = LD_JOB_CONFIG_MAX + 1;
    half.tasks_option = NULL;
    stray.tasks_option = "trades";
    int fails = ld_job_check(&ld_models_job, err, sizeof err) != 0;
    fails += ld_job_check(&big, err, sizeof err) != -EINVAL ||
             strcmp(err, "job models has 1025 bytes of config, past LD_JOB_CONFIG_MAX "
                         "(1024): raise it in job.h") != 0;
    fails += ld_job_check(&half, err, sizeof err) != -EINVAL;
    fails += ld_job_check(&stray, err, sizeof err) != -EINVAL;
    if (fails)
        fprintf(stderr, "FAIL limits: %d case(s); last message: %s\n", fails, err);
    return fails != 0;
}

/* An option two jobs declare goes to both, given once, and either job running is
 * enough for it. */
static int check_shared(void)
{
    char *both[] = {"loomdist", "--jobs", "models,pool", "--mem-limit", "12345"};
    char *one[] = {"loomdist", "--mem-limit=777", "--jobs=pool"};
    ld_options o;
    char err[256];
    size_t m = ld_job_index(&ld_models_job), p = ld_job_index(&ld_pool_job);
    int fails = ld_options_parse(&o, 5, both, err, sizeof err) != LD_OPTIONS_RUN;
    fails += ((const ld_models_config *)o.job_config[m])->profile.mem_limit != 12345;
    fails += ((const ld_pool_config *)o.job_config[p])->profile.mem_limit != 12345;
    fails += ld_options_parse(&o, 3, one, err, sizeof err) != LD_OPTIONS_RUN;
    fails += ((const ld_pool_config *)o.job_config[p])->profile.mem_limit != 777;
    if (fails)
        fprintf(stderr, "FAIL shared options\n");
    return fails != 0;
}

int main(void)
{
    int fails = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        fails += check_bad(&bad[i]);
    fails += check_defaults() + check_selection() + check_help_version();
    fails += check_test_faults() + check_declarations() + check_limits() + check_shared();
    if (fails) {
        fprintf(stderr, "%d option checks failed\n", fails);
        return 1;
    }
    printf("%zu bad command lines rejected with their messages; defaults ok\n",
           sizeof bad / sizeof bad[0]);
    return 0;
}
