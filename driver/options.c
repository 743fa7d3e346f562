/* options.c: a table of options, one parser for all of them, and the checks between
 * them. A bad value names the option, what it got, and what it takes. */
#include "options.h"

#include "cpus.h"
#include "gt.h"
#include "pg.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The driver's options that do not fit the ld_opt form: they take a list or a file
 * name, or stop the run. Each is handled by name in apply_special(). */
static const struct special {
    const char *name, *metavar, *help;
} specials[] = {
    {"jobs", "LIST",
     "jobs to run, comma-separated (default: every job but those marked below as run "
     "only when named)"},
    {"strategies", "LIST",
     "strategies to run, as name or job/name, comma-separated (default all)"},
    {"output", "FILE", "HDF5 results file (default loomdist.h5)"},
    {"schema", NULL, "print the HDF5 layout the jobs declare, as Markdown, and exit"},
    {"help", NULL, "print this help and exit"},
    {"version", NULL, "print the version and git commit and exit"},
};
#define NSPECIALS (sizeof specials / sizeof specials[0])

#define AT(field) offsetof(ld_options, field)

/* The largest run one rank can hold: beyond it the book alone outgrows a node. Whether
 * the node has the memory for the trades each rank gets is checked before the run. */
#define LD_TRADES_MAX 100000000.0

static const char *const stack_modes[] = {"own", "copy", NULL}; /* enum ld_stack_mode */
static const char *const partitions[] = {"block", "cyclic", "ranges", NULL};

static const ld_opt common[] = {
    {"trades", LD_OPT_COUNT, AT(trades), 1, LD_TRADES_MAX, 8000, NULL, "N",
     "trades in the book, split across the ranks (default 8000)", LD_OPT_RESULT, NULL},
    {"seed", LD_OPT_COUNT, AT(seed), 0, 18446744073709551615.0, 42, NULL, "S",
     "seed of the book and of every trade's PCG streams (default 42)", LD_OPT_RESULT,
     NULL},
    {"carriers", LD_OPT_COUNT, AT(carriers), 1, LD_CPUS_MAX, 0, NULL, "N",
     "carrier threads for green threads and callbacks (default: the rank's CPUs)",
     LD_OPT_RESULT, NULL},
    {"workers", LD_OPT_COUNT, AT(workers), 1, LD_CPUS_MAX, 0, NULL, "N",
     "pinned workers of the worker strategies (default: the rank's CPUs)", LD_OPT_RESULT,
     NULL},
    {"stack-size", LD_OPT_COUNT, AT(stack_kib), 16, 65536, LD_GT_STACK_DEFAULT / 1024.0,
     NULL, "KIB",
     "usable stack of each green thread in KiB (default 64); in copy mode, of each "
     "carrier's one stack",
     LD_OPT_RESULT, "stack_kib"},
    {"stack-mode", LD_OPT_CHOICE, AT(stack_mode), 0, 0, LD_STACK_COPY, stack_modes,
     "copy|own",
     "green threads: share one stack per carrier and copy each thread's frames out and "
     "back at a switch, as Loom does, or give each thread a stack of its own "
     "(default copy where the build's context switch allows it, else own)",
     LD_OPT_RESULT, NULL},
    {"cold-stacks", LD_OPT_FLAG, AT(cold_stacks), 0, 0, 0, NULL, NULL,
     "green strategies: do not reserve and fault in a stack (in copy mode, a chunk) per "
     "task before the clock starts, so the run pays for its page faults",
     LD_OPT_RESULT, NULL},
    {"partition", LD_OPT_CHOICE, AT(partition), 0, 0, LD_PARTITION_BLOCK, partitions,
     "block|cyclic|ranges", "how rank 0 deals trades to ranks (default block)",
     LD_OPT_RESULT, NULL},
    {"warmup", LD_OPT_COUNT, AT(warmup), 0, 1000, 0, NULL, "N",
     "discarded iterations of each strategy before the measured ones (default 0; "
     "then a job with a baseline warms up its first strategy once)",
     0, NULL},
    {"iterations", LD_OPT_COUNT, AT(iterations), 1, 1000, 1, NULL, "N",
     "measured iterations of each strategy; 3 or more give a 99.9% CI (default 1)", 0,
     NULL},
    {"trace-pinning", LD_OPT_FLAG, AT(trace_pinning), 0, 0, 0, NULL, NULL,
     "report each carrier a green thread blocked past --trace-threshold, with the green "
     "thread's backtrace (as -Djdk.tracePinnedThreads=full)",
     0, NULL},
    {"trace-threshold", LD_OPT_REAL, AT(trace_threshold_ms), 0.1, 1e6, 10, NULL, "MS",
     "what --trace-pinning counts as blocked, in ms (default 10)", 0, NULL},
    {"quiet", LD_OPT_FLAG, AT(quiet), 0, 0, 0, NULL, NULL,
     "print only the results tables: no progress, no detail lines", 0, NULL},
    /* Test-only: the faults of tests/fault. */
    {"test-slow-rank", LD_OPT_COUNT, AT(test_slow_rank), 0, 2147483647.0, UINT32_MAX,
     NULL, "RANK", NULL, LD_OPT_HIDDEN, NULL},
    {"test-slow-factor", LD_OPT_REAL, AT(test_slow_factor), 1, 1000, 1, NULL, "X", NULL,
     LD_OPT_HIDDEN, NULL},
    {"test-overflow-rank", LD_OPT_COUNT, AT(test_overflow_rank), 0, 2147483647.0,
     UINT32_MAX, NULL, "RANK", NULL, LD_OPT_HIDDEN, NULL},
};
#define NCOMMON (sizeof common / sizeof common[0])

/* The masks a parse keeps: a bit per strategy of a job, a bit per option given. */
_Static_assert(LD_MAX_STRATEGIES <= 32, "a job's selection is a uint32_t mask");
_Static_assert(LD_MAX_OPTS <= 64, "a job's options given are a uint64_t mask");
_Static_assert(NCOMMON <= 64, "the driver's options given are a uint64_t mask");

const ld_opt *ld_options_common(size_t *n)
{
    *n = NCOMMON;
    return common;
}

static uint32_t all_strategies(const ld_job *job)
{
    return (uint32_t)((1ull << job->nstrategies) - 1);
}

static void defaults(ld_options *o)
{
    memset(o, 0, sizeof *o);
    ld_opt_defaults(common, NCOMMON, o);
    if (!ld_stack_mode_supported(LD_STACK_COPY))
        o->stack_mode = LD_STACK_OWN;
    strcpy(o->output, "loomdist.h5");
    for (size_t j = 0; j < ld_njobs; j++) {
        o->selected[j] = ld_jobs[j]->opt_in ? 0 : all_strategies(ld_jobs[j]);
        ld_opt_defaults(ld_jobs[j]->opts, ld_jobs[j]->nopts, o->job_config[j]);
    }
}

/* The message quotes what the user typed, which may hold a newline or a terminal
 * escape: each control character shows as '?', so the message stays one line. */
static int one_line(char *err)
{
    for (char *c = err; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return -EINVAL;
}

/* Say what to fix, in err; returns -EINVAL, for the caller to return. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return one_line(err);
}

/* The largest value of a whole-number option, exactly: a double rounds 2^64 - 1 up. */
static unsigned long long count_max(const ld_opt *opt)
{
    return opt->max >= 18446744073709551615.0 ? ULLONG_MAX : (unsigned long long)opt->max;
}

/* A whole-number option: digits only, no sign, no suffix, within [min, max]. */
static int parse_count(const ld_opt *opt, const char *v, uint64_t *out, char *err,
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

static int parse_double(const ld_opt *opt, const char *v, double *out, char *err,
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

/* Pick one of a few names, e.g. sort|select; the index is the stored value. */
static int parse_choice(const ld_opt *opt, const char *v, int *out, char *err,
                        size_t errlen)
{
    for (int i = 0; opt->choices[i]; i++) {
        if (strcmp(v, opt->choices[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return fail(err, errlen, "--%s takes %s, not '%s'", opt->name, opt->metavar, v);
}

/* A word: 1 to LD_OPT_TEXT_MAX - 1 bytes, none of them a space or a control character.
 * What the word may say is the job's check's to judge. A refusal quotes the value with
 * any URL's user information and password masked (the word may be --db-url's), and
 * gives only the length of one too long to be a word. */
static int parse_text(const ld_opt *opt, const char *v, char *out, char *err,
                      size_t errlen)
{
    char shown[LD_OPT_TEXT_MAX + 16];
    size_t len = strlen(v);
    if (len >= LD_OPT_TEXT_MAX)
        return fail(err, errlen, "--%s takes %s: a word of 1 to %d bytes, not %zu bytes",
                    opt->name, opt->metavar, LD_OPT_TEXT_MAX - 1, len);
    int word = len > 0;
    for (const char *c = v; word && *c; c++)
        word = (unsigned char)*c > 0x20 && *c != 0x7f;
    if (!word) {
        ld_pg_word_mask(v, shown, sizeof shown);
        return fail(err, errlen, "--%s takes %s: a word of 1 to %d bytes, not '%s'",
                    opt->name, opt->metavar, LD_OPT_TEXT_MAX - 1, shown);
    }
    memcpy(out, v, len + 1);
    return 0;
}

/* Store one option's value, parsed as its type says, into its config struct. */
static int apply_opt(const ld_opt *opt, void *config, const char *v, char *err,
                     size_t errlen)
{
    char *field = (char *)config + opt->offset;
    uint64_t n = 0;
    double d = 0;
    int i = 1, rc = 0;
    switch (opt->type) {
    case LD_OPT_COUNT:
        if ((rc = parse_count(opt, v, &n, err, errlen)) == 0)
            memcpy(field, &n, sizeof n);
        return rc;
    case LD_OPT_REAL:
        if ((rc = parse_double(opt, v, &d, err, errlen)) == 0)
            memcpy(field, &d, sizeof d);
        return rc;
    case LD_OPT_CHOICE:
        rc = parse_choice(opt, v, &i, err, errlen);
        break;
    case LD_OPT_TEXT:
        return parse_text(opt, v, field, err, errlen);
    case LD_OPT_FLAG:
        break;
    }
    if (rc == 0)
        memcpy(field, &i, sizeof i);
    return rc;
}

/* Every job's name, comma-separated, for messages. */
static void job_names(char *out, size_t len)
{
    out[0] = '\0';
    for (size_t j = 0; j < ld_njobs; j++) {
        if (j)
            strncat(out, ", ", len - strlen(out) - 1);
        strncat(out, ld_jobs[j]->name, len - strlen(out) - 1);
    }
}

/* --jobs A,B: a job left out gets no strategy at all; one named gets all of its
 * strategies, an opt-in job too. */
static int parse_jobs(ld_options *o, const char *v, char *err, size_t errlen)
{
    uint32_t keep[LD_MAX_JOBS] = {0};
    char list[256];
    if (strlen(v) >= sizeof list || *v == '\0')
        return fail(err, errlen, "--jobs takes a comma-separated list of jobs, not '%s'",
                    v);
    strcpy(list, v);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        const ld_job *job = ld_job_find(name);
        if (!job) {
            char names[256];
            job_names(names, sizeof names);
            return fail(err, errlen, "--jobs: unknown job '%s' (jobs: %s)", name, names);
        }
        keep[ld_job_index(job)] = 1;
    }
    for (size_t j = 0; j < ld_njobs; j++)
        o->selected[j] = keep[j] ? all_strategies(ld_jobs[j]) : 0;
    return 0;
}

/* One --strategies item: "name" selects the strategy of that name in every job that
 * has one, and "job/name" only that job's. Returns the number of strategies it matched.
 */
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
        return fail(err, errlen,
                    "--strategies takes a comma-separated list of strategies, not '%s'",
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

/* What one parse collects beyond the options themselves. */
typedef struct parse_state {
    uint32_t strategies[LD_MAX_JOBS];
    int have_strategies, help, version, schema;
    uint64_t given[LD_MAX_JOBS]; /* each job's options given, a bit per index */
    uint64_t given_common;       /* the driver's options given, a bit per index */
} parse_state;

/* The next declaration of an option name at or after table *j (0: the driver's, k: job
 * k-1's), with *j set to its table; NULL past the last. Jobs may declare the same
 * option (the resource profile's), each storing it in a config of its own. */
static const ld_opt *next_opt(const char *name, size_t len, size_t *j)
{
    for (; *j <= ld_njobs; ++*j) {
        const ld_opt *opts = *j == 0 ? common : ld_jobs[*j - 1]->opts;
        size_t n = *j == 0 ? NCOMMON : ld_jobs[*j - 1]->nopts;
        for (size_t k = 0; k < n; k++)
            if (strlen(opts[k].name) == len && strncmp(opts[k].name, name, len) == 0)
                return &opts[k];
    }
    return NULL;
}

/* A job's option, given: stored in the config of every job that declares it. */
static int apply_job_opt(ld_options *o, parse_state *ps, const ld_opt *opt, size_t j,
                         const char *v, char *err, size_t errlen)
{
    size_t len = strlen(opt->name);
    for (; opt; ++j, opt = next_opt(opt->name, len, &j)) {
        int rc = apply_opt(opt, o->job_config[j - 1], v, err, errlen);
        if (rc != 0)
            return rc;
        ps->given[j - 1] |= UINT64_C(1) << (opt - ld_jobs[j - 1]->opts);
    }
    return 0;
}

static const struct special *find_special(const char *name, size_t len)
{
    for (size_t i = 0; i < NSPECIALS; i++)
        if (strlen(specials[i].name) == len && strncmp(specials[i].name, name, len) == 0)
            return &specials[i];
    return NULL;
}

static int apply_special(ld_options *o, parse_state *ps, const struct special *sp,
                         const char *v, char *err, size_t errlen)
{
    if (strcmp(sp->name, "help") == 0 || strcmp(sp->name, "version") == 0 ||
        strcmp(sp->name, "schema") == 0) {
        *(sp->name[0] == 'h'   ? &ps->help
          : sp->name[0] == 'v' ? &ps->version
                               : &ps->schema) = 1;
        return 0;
    }
    if (!v) /* every other special takes a value; parse_arg has made sure of it */
        return fail(err, errlen, "--%s needs a value (%s)", sp->name, sp->metavar);
    if (strcmp(sp->name, "jobs") == 0)
        return parse_jobs(o, v, err, errlen);
    if (strcmp(sp->name, "strategies") == 0) {
        ps->have_strategies = 1;
        return parse_strategies(ps->strategies, v, err, errlen);
    }
    if (*v == '\0' || strlen(v) >= LD_OUTPUT_MAX)
        return fail(err, errlen, "--%s takes a file name of 1 to %d bytes", sp->name,
                    LD_OUTPUT_MAX - 1);
    strcpy(o->output, v);
    return 0;
}

/* One argument (and the next, when it is this one's value); *i moves past both. */
static int parse_arg(ld_options *o, parse_state *ps, int argc, char *const *argv, int *i,
                     char *err, size_t errlen)
{
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
        return fail(err, errlen, "unexpected argument '%s': options start with --", arg);
    const char *eq = strchr(arg + 2, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2), job = 0;
    const ld_opt *opt = next_opt(arg + 2, len, &job);
    const struct special *sp = opt ? NULL : find_special(arg + 2, len);
    if (!opt && !sp)
        return fail(err, errlen, "unknown option '%.*s' (try --help)", (int)(len + 2),
                    arg);
    const char *name = opt ? opt->name : sp->name;
    int is_flag = opt ? opt->type == LD_OPT_FLAG : sp->metavar == NULL;
    const char *v = eq ? eq + 1 : NULL;
    if (is_flag && v)
        return fail(err, errlen, "--%s takes no value", name);
    if (!is_flag && !v) {
        if (*i + 1 >= argc)
            return fail(err, errlen, "--%s needs a value (%s)", name,
                        opt ? opt->metavar : sp->metavar);
        v = argv[++*i];
    }
    if (sp)
        return apply_special(o, ps, sp, v, err, errlen);
    if (job > 0)
        return apply_job_opt(o, ps, opt, job, v, err, errlen);
    ps->given_common |= UINT64_C(1) << (opt - common);
    return apply_opt(opt, o, v, err, errlen);
}

/* The job that first declares opt. */
static size_t idle_job(const ld_opt *opt)
{
    size_t j = 1;
    next_opt(opt->name, strlen(opt->name), &j);
    return j - 1;
}

/* An option given that no selected job declares, or NULL. */
static const ld_opt *given_idle(const ld_options *o, const parse_state *ps)
{
    for (size_t j = 0; j < ld_njobs; j++) {
        for (size_t k = 0; !o->selected[j] && k < ld_jobs[j]->nopts; k++) {
            const ld_opt *opt = &ld_jobs[j]->opts[k];
            size_t len = strlen(opt->name), d = 1;
            int used = 0;
            if (!(ps->given[j] >> k & 1))
                continue;
            for (; !used && next_opt(opt->name, len, &d); d++)
                used = o->selected[d - 1] != 0;
            if (!used)
                return opt;
        }
    }
    return NULL;
}

/* Whether option `name` of table opts[0..n) was given, by the bits of `given`. */
static int was_given(const ld_opt *opts, size_t n, uint64_t given, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(opts[k].name, name) == 0)
            return (int)(given >> k & 1);
    return 0;
}

/* Two options given that say opposite things: the run could honour only one of them,
 * and which would be a guess. A selected job declares its pairs; the driver's own is
 * a threshold for a trace that is off. */
static int check_conflicts(const ld_options *o, const parse_state *ps, char *err,
                           size_t errlen)
{
    if (was_given(common, NCOMMON, ps->given_common, "trace-threshold") &&
        !o->trace_pinning)
        return fail(err, errlen,
                    "--trace-threshold does nothing without --trace-pinning: add "
                    "--trace-pinning, or drop --trace-threshold");
    for (size_t j = 0; j < ld_njobs; j++) {
        const ld_job *job = ld_jobs[j];
        for (const ld_opt_conflict *c = job->conflicts; o->selected[j] && c && c->a; c++)
            if (was_given(job->opts, job->nopts, ps->given[j], c->a) &&
                was_given(job->opts, job->nopts, ps->given[j], c->b))
                return fail(err, errlen,
                            "--%s and --%s contradict each other (%s): give one of "
                            "them",
                            c->a, c->b, c->why);
    }
    return 0;
}

/* Checks that need more than one option: a strategy list that leaves a selected job
 * with nothing to run, a job's option for a job that does not run, two options that
 * contradict each other, a stack mode the build cannot do, and each selected job's
 * own checks. */
static int check_together(ld_options *o, const parse_state *ps, char *err, size_t errlen)
{
    int any = 0;
    for (size_t j = 0; j < ld_njobs; j++) {
        if (ps->have_strategies && o->selected[j])
            o->selected[j] = ps->strategies[j];
        any |= o->selected[j] != 0;
    }
    if (!any)
        return fail(err, errlen,
                    "--jobs and --strategies select nothing to run: pick strategies of "
                    "the jobs you ask for");
    const ld_opt *idle = given_idle(o, ps);
    if (idle)
        return fail(err, errlen,
                    "--%s is an option of the %s job, which this run does not "
                    "select: add it to --jobs, or drop the option",
                    idle->name, ld_jobs[idle_job(idle)]->name);
    if (check_conflicts(o, ps, err, errlen) != 0)
        return -EINVAL;
    if (!ld_stack_mode_supported((enum ld_stack_mode)o->stack_mode))
        return fail(err, errlen,
                    "--stack-mode copy needs the assembly context switch, and this "
                    "build uses ucontext: use --stack-mode own");
    for (size_t j = 0; j < ld_njobs; j++)
        if (o->selected[j] && ld_jobs[j]->check &&
            ld_jobs[j]->check(o->job_config[j], err, errlen) != 0)
            return one_line(err);
    return 0;
}

enum ld_options_verdict ld_options_parse(ld_options *o, int argc, char *const *argv,
                                         char *err, size_t errlen)
{
    parse_state ps;
    memset(&ps, 0, sizeof ps);
    if (ld_jobs_check(err, errlen) != 0) /* before defaults fills the jobs' configs */
        return LD_OPTIONS_INVALID;
    defaults(o);
    for (int i = 1; i < argc; i++)
        if (parse_arg(o, &ps, argc, argv, &i, err, errlen) != 0)
            return LD_OPTIONS_INVALID;
    if (ps.help)
        return LD_OPTIONS_HELP;
    if (ps.version)
        return LD_OPTIONS_VERSION;
    if (ps.schema)
        return LD_OPTIONS_SCHEMA;
    if (check_together(o, &ps, err, errlen) != 0)
        return LD_OPTIONS_INVALID;
    return LD_OPTIONS_RUN;
}

/* Whether a test-only fault aimed at `target` falls on the rank these options run on. */
static int aimed_here(const ld_options *o, uint64_t target)
{
    return o->rank >= 0 && (uint64_t)o->rank == target;
}

void ld_options_job_config(const ld_options *o, size_t j, const ld_cpus *cpus,
                           ld_job_config *cfg)
{
    *cfg = (ld_job_config){
        .seed = o->seed,
        .carriers = (unsigned)o->carriers,
        .workers = (unsigned)o->workers,
        .stack_size = (size_t)o->stack_kib * 1024,
        .stack_mode = (enum ld_stack_mode)o->stack_mode,
        .trace_pinning_ns = o->trace_pinning ? (int64_t)(o->trace_threshold_ms * 1e6) : 0,
        .cold_stacks = o->cold_stacks,
        .slow_factor = aimed_here(o, o->test_slow_rank) ? o->test_slow_factor : 1,
        .test_overflow = aimed_here(o, o->test_overflow_rank),
        .opts = o->job_config[j],
        .cpus = cpus,
        .strategies = o->selected[j],
    };
}

/* One option's line: "  --name METAVAR    help", the help on a line of its own
 * when the option is too long to leave a gap before it. */
static void usage_line(FILE *out, const char *name, const char *metavar, const char *help)
{
    char lhs[64];
    snprintf(lhs, sizeof lhs, "--%s%s%s", name, metavar ? " " : "",
             metavar ? metavar : "");
    if (strlen(lhs) > 26) /* too long to share a line with its help */
        fprintf(out, "  %s\n  %-26s %s\n", lhs, "", help);
    else
        fprintf(out, "  %-26s %s\n", lhs, help);
}

static void usage_opts(FILE *out, const ld_opt *opts, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!(opts[k].flags & LD_OPT_HIDDEN))
            usage_line(out, opts[k].name, opts[k].metavar, opts[k].help);
}

/* Each job: its summary, its options, its strategies. */
static void usage_jobs(FILE *out)
{
    for (size_t j = 0; j < ld_njobs; j++) {
        const ld_job *job = ld_jobs[j];
        fprintf(out, "\nJob %s%s: %s\n", job->name,
                job->opt_in ? " (only when --jobs names it)" : "", job->summary);
        usage_opts(out, job->opts, job->nopts);
        if (job->notes)
            fprintf(out, "  %s\n", job->notes);
        fprintf(out, "  strategies:\n");
        for (size_t s = 0; s < job->nstrategies; s++)
            fprintf(out, "    %-14s %s\n", job->strategies[s].name,
                    job->strategies[s].summary);
    }
}

void ld_options_usage(FILE *out)
{
    fprintf(out, "Usage: mpirun -n RANKS loomdist [OPTIONS]\n"
                 "  or:  loomdist [OPTIONS]            (one rank, no mpirun)\n\n"
                 "Rank 0 builds a book of trades and scatters it; every rank runs each\n"
                 "selected strategy on its share, and the results go into one HDF5 file\n"
                 "written collectively, renamed into place only when complete.\n\n"
                 "Options (--name VALUE or --name=VALUE):\n");
    usage_opts(out, common, NCOMMON);
    for (size_t i = 0; i < NSPECIALS; i++)
        usage_line(out, specials[i].name, specials[i].metavar, specials[i].help);
    usage_jobs(out);
    fprintf(out,
            "\nMemory: the green strategies keep one green thread per trade. In copy\n"
            "mode (the default) a parked thread is a 192-byte chunk holding its\n"
            "struct and frozen frames, plus about 0.2 KiB of per-trade state: N\n"
            "trades on one rank need about N x 0.4 KiB (1,000,000 trades: about\n"
            "0.4 GiB; 8,000: 3 MiB), and each carrier maps one --stack-size stack.\n"
            "With --stack-mode own each thread keeps one 4 KiB page of its stack\n"
            "resident: about N x 4.6 KiB (1,000,000 trades: about 4.3 GiB), plus\n"
            "--stack-size of virtual memory per thread. Neither needs a sysctl: past\n"
            "what vm.max_map_count allows for guard pages, own stacks are\n"
            "canary-checked. A run whose trades need more than 90%% of MemAvailable\n"
            "(or of the cgroup's memory.max) fails before it starts, naming the\n"
            "limit.\n");
    fprintf(out,
            "\nExit status: 0 on success, 2 for a bad option or an output that cannot\n"
            "be written, 1 for a failure during the run.\n");
}

void ld_options_version(FILE *out)
{
    fprintf(out, "loomdist %s (git %s)\n", LD_VERSION, LD_GIT_COMMIT);
}
