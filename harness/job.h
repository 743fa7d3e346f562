/* job.h: a job is a workload that describes itself; the driver runs every job alike.
 *
 * A job declares, as plain tables:
 *   - its options (ld_opt): name, type, range, default and help line, stored in a
 *     config struct the job owns, of config_size bytes; jobs may share an option
 *     (job_profile.h's), declared alike in each, and a value given once goes to all;
 *   - its per-task columns (ld_column): name, type, unit and where the value lives in
 *     the job's per-task result struct, of result_size bytes;
 *   - the derived figures its table reports (enum ld_report): a lower bound such as
 *     the critical path, percentiles of a column, time per task, speedup over its own
 *     baseline strategy, or named figures (ld_figure) for jobs with no per-task result;
 *   - its strategies (ld_strategy), each a function over the rank's tasks.
 *
 * It prepares per-task state once (untimed); then each strategy runs over the rank's
 * tasks and fills one result per task. The harness (ld_job_measure) times the
 * strategy and samples its threads, memory and CPU. Jobs know no MPI.
 *
 * Adding a strategy is one file with its run function plus one entry in its job's
 * table; adding a job is its folder, jobs/<job>/ (its files and a CMakeLists.txt of one
 * ld_add_job line), plus one entry in jobs/registry.c.
 */
#ifndef LD_JOB_H
#define LD_JOB_H

#include <stddef.h>
#include <stdint.h>

/* What the contract hands around by pointer, declared here so that a user of job.h
 * pulls in none of its owners' headers; each is defined where its name says. */
typedef struct ld_trade ld_trade;             /* the book: lib/trade/book.h */
typedef struct ld_cpus ld_cpus;               /* lib/sys/cpus.h */
typedef struct ld_metrics ld_metrics;         /* the probe: lib/sys/metrics.h */
typedef struct ld_stack_depot ld_stack_depot; /* the runtime: gt.h */

/* Limits the driver's fixed tables rely on: the job count is a _Static_assert in
 * registry.c, the masks' widths are in driver/options.c, and ld_jobs_check, which the
 * parser calls before anything else, checks each job against the rest. */
#define LD_MAX_JOBS 16
#define LD_MAX_STRATEGIES 32   /* per job: a job's selection is a 32-bit mask */
#define LD_MAX_OPTS 64         /* per job: the options given are a 64-bit mask */
#define LD_JOB_CONFIG_MAX 1024 /* bytes of a job's own config struct */
#define LD_JOB_RESULT_MAX 64   /* bytes of a job's per-task result struct */

/* A job's config_size: its config struct's, which must fit the driver's table of
 * LD_JOB_CONFIG_MAX bytes: a larger one fails to compile (an array of size -1). */
#define LD_JOB_CONFIG_SIZE(type)                                                         \
    (sizeof(type) + 0 * sizeof(char[sizeof(type) <= LD_JOB_CONFIG_MAX ? 1 : -1]))

/* The number of entries of a declared table. */
#define LD_LEN(table) (sizeof(table) / sizeof((table)[0]))

/* --- Options ------------------------------------------------------------------- */

enum ld_opt_type {
    LD_OPT_COUNT,  /* a whole number in [min, max], stored as uint64_t */
    LD_OPT_REAL,   /* a finite number in [min, max], stored as double */
    LD_OPT_CHOICE, /* one of choices[], stored as int: its index */
    LD_OPT_FLAG,   /* present or not, stored as int */
    LD_OPT_TEXT,   /* a word: one of choices[] or other text the job's check takes,
                      of 1 to LD_OPT_TEXT_MAX - 1 printable bytes, stored as
                      char[LD_OPT_TEXT_MAX]; its default is choices[def] */
};

/* Room for a postgresql:// URL with its user, password and options. */
#define LD_OPT_TEXT_MAX 256

enum ld_opt_flags {
    LD_OPT_RESULT = 1, /* changes a result: written as a root attribute of the file,
                          and part of the analysis' experiment key */
    LD_OPT_HIDDEN = 2, /* test-only: parsed, but not in --help */
};

/* Laid out in the order a table reads best, at the cost of 8 padding bytes an option. */
typedef struct ld_opt { /* NOLINT(clang-analyzer-optin.performance.Padding) */
    const char *name;   /* --name, also the attribute's name with '-' as '_' */
    enum ld_opt_type type;
    size_t offset; /* of the value in the config struct */
    double min, max;
    double def;                 /* the default; for a choice, its index */
    const char *const *choices; /* LD_OPT_CHOICE, LD_OPT_TEXT: names, NULL-terminated */
    const char *metavar;        /* "N", "X", "sort|select"; NULL for a flag */
    const char *help;           /* one line for --help */
    unsigned flags;             /* enum ld_opt_flags */
    const char *attr;           /* the attribute's name when not the option's */
} ld_opt;

/* The value of option `o` in `config`, as a double (a choice: its index; a text: the
 * index of the choice it is, or -1). */
double ld_opt_value(const ld_opt *o, const void *config);

/* Two options that contradict each other: given together, the run is refused with
 * one line naming both, and `why`. */
typedef struct ld_opt_conflict {
    const char *a, *b; /* option names, without the -- */
    const char *why;   /* "--study-phases sets both phases to 30 s" */
} ld_opt_conflict;

/* Set every option of a table to its default. */
void ld_opt_defaults(const ld_opt *opts, size_t n, void *config);

/* --- Per-task columns ---------------------------------------------------------- */

enum ld_col_type { LD_COL_I64, LD_COL_F64, LD_COL_U8, LD_COL_I8 };

enum ld_col_flags {
    LD_COL_PERCENTILES = 1, /* the driver reports p50, p99 and max of it */
};

/* Laid out in the order a table reads best, as ld_opt is. */
typedef struct ld_column { /* NOLINT(clang-analyzer-optin.performance.Padding) */
    const char *name;      /* the dataset's name */
    enum ld_col_type type;
    const char *unit; /* the dataset's unit attribute: "ns", "USD", "" for a code */
    size_t offset;    /* of the value in the job's result struct */
    const char *doc;  /* one line for the schema */
    unsigned flags;   /* enum ld_col_flags */
} ld_column;

/* Bytes of one value of a column type. */
size_t ld_col_bytes(enum ld_col_type t);

/* The value of column c in one result struct, widened. */
int64_t ld_col_i64(const ld_column *c, const void *result);

/* --- What a strategy is handed ------------------------------------------------- */

/* The settings every job shares. Counts of 0 mean "one per CPU of the rank". */
typedef struct ld_job_config {
    uint64_t seed;
    unsigned carriers;        /* green strategies and loops: carrier threads */
    unsigned workers;         /* pinned-worker strategies: worker threads */
    size_t stack_size;        /* green threads: usable stack bytes */
    int stack_mode;           /* green threads: enum ld_stack_mode (gt.h) */
    int64_t trace_pinning_ns; /* report carriers blocked longer than this; 0: off */
    int cold_stacks;          /* green strategies: no stacks reserved before the clock */
    unsigned trim_after;      /* green strategies: the schedulers' trim policy (gt.h);
                                 0: none. Set by a job for its own carriers */
    double slow_factor;       /* tests only: this rank's timed waits take this many times
                                 longer (1: none) */
    int test_overflow;        /* tests only: the job's first green thread overflows */
    const void *opts;         /* the job's own config struct, of its config_size */
    ld_stack_depot *stacks;   /* green strategies: stacks shared by every run; or NULL */
    struct ld_carriers *kept; /* carrier strategies: carriers kept across runs
                                 (carriers.h); NULL: each run makes its own */
    const ld_cpus *cpus;      /* the CPUs this rank owns */
    const char *shared;       /* what the job's share wrote on rank 0, on every rank; NULL
                                 for a job without share */
    uint32_t strategies; /* the strategies that run: bit s for strategies[s]; 0: all */
    int ranks;           /* the ranks the job runs on; 0: not known (one) */
    const char *peers;   /* in share, on rank 0: the addresses (IPv4 and IPv6, as
                            text, space-separated) of every interface that is up on
                            every rank's node, loopback included, for a service that
                            lets in the job's nodes only; NULL elsewhere */
} ld_job_config;

/* The bytes, with the NUL, of the text a job's share hands every rank. */
#define LD_JOB_SHARED_MAX 256

/* A named scalar a strategy measured, for jobs whose results are not per task (micro):
 * "green_ns" 12.5 "ns". Names and units are string literals, the same on every rank. */
typedef struct ld_figure {
    const char *name;
    double value;
    const char *unit;
} ld_figure;

#define LD_FIGURES_MAX 64
#define LD_FIGURE_NAME_MAX                                                               \
    64 /* bytes of a figure's name with its NUL: it names a dataset */

typedef struct ld_figures {
    ld_figure v[LD_FIGURES_MAX];
    size_t n;
} ld_figures;

/* Append a figure; past LD_FIGURES_MAX it is dropped and -ENOSPC returned. */
int ld_figure_add(ld_figures *f, const char *name, double value, const char *unit);

/* Put f's figures in the order of names[0..n), matching by name, so that the figures
 * of every iteration and rank line up by position: 0, or -EINVAL with one line in
 * why[0..len) when a name of f is past LD_FIGURE_NAME_MAX or repeated, or f lacks one
 * of names or has one more (f is then left in some order). */
int ld_figures_order(ld_figures *f, const char *const *names, size_t n, char *why,
                     size_t len);

/* What a strategy is handed: the tasks, the job's prepared state, t0, the ld_now_ns()
 * at which the timed run began, where the n results go (zeroed; the job's result
 * struct), and where to put any named figures. */
typedef struct ld_job_input {
    const ld_job_config *cfg;
    const ld_trade *trades;
    size_t n;
    const void *prepared;
    int64_t t0;
    void *results;
    ld_figures *figures;
} ld_job_input;

/* 0, or a negative errno; a strategy that can name what failed says it first with
 * ld_why_say (why.h), and the driver prints that in its one line for the run. */
typedef int (*ld_strategy_fn)(const ld_job_input *in);

/* Which OS threads a strategy runs on, for reports. */
enum ld_threading {
    LD_ON_ONE,      /* the calling thread */
    LD_ON_CARRIERS, /* green threads on --carriers carrier threads */
    LD_ON_LOOPS,    /* libuv loops on --carriers carrier threads, no green threads */
    LD_ON_WORKERS,  /* --workers pinned workers */
    LD_ON_OWN,      /* threads the job sizes itself: threads_fn says how many */
};

typedef struct ld_strategy {
    const char *name;
    const char *summary; /* one line for --help */
    ld_strategy_fn run;
    enum ld_threading threading;
} ld_strategy;

/* --- What the table reports ---------------------------------------------------- */

/* The derived figures a job's detail lines show, in the order listed. */
enum ld_report {
    LD_REPORT_END = 0,
    LD_REPORT_BOUND,       /* the job's lower bound (bound_name), and wall over it */
    LD_REPORT_PERCENTILES, /* p50, p99, max of each LD_COL_PERCENTILES column */
    LD_REPORT_PER_TASK,    /* wall time per task per rank, and threads per rank */
    LD_REPORT_SPEEDUP,     /* speedup over the job's baseline, and efficiency */
    LD_REPORT_FIGURES,     /* the strategies' named figures, in a table of their own */
};

/* The columns of a job's main table, in order; the strategy's name comes first. */
enum ld_table_col {
    LD_TABLE_END = 0,
    LD_TABLE_TASKS,      /* tasks, all ranks */
    LD_TABLE_TIME,       /* makespan, mean over iterations, with a CI from 3 */
    LD_TABLE_THROUGHPUT, /* tasks / makespan */
    LD_TABLE_THREADS,    /* peak OS threads of the rank with the most */
    LD_TABLE_MEMORY,     /* peak RSS: all ranks, and the rank with the most */
    LD_TABLE_IMBALANCE,  /* max / average wall across ranks */
    LD_TABLE_OPS,        /* operations per second, an iteration being one: the mean
                            of 1000 / makespan in ms, with a CI from 3 */
    LD_TABLE_LIMIT,      /* the lower bound as operations per second, and the
                            score as a share of it */
};

#define LD_REPORTS_MAX 8
#define LD_TABLE_COLS_MAX 8

typedef struct ld_job {
    const char *name;
    const char *summary;
    const char *notes; /* a line of --help under the job's options, or NULL */
    int opt_in;        /* runs only when --jobs names it */
    const ld_strategy *strategies;
    size_t nstrategies;

    const ld_opt *opts; /* the job's own options, stored in a config_size struct */
    size_t nopts;
    size_t config_size;
    /* What one option's range cannot say: the form of a text option, or options that
     * only go together. Called on every rank as the options are parsed, for a selected
     * job, with its config struct: 0, or -EINVAL with one line for the user in err (the
     * run then exits 2). NULL: no such checks. */
    int (*check)(const void *opts, char *err, size_t errlen);
    /* Pairs of its options that contradict each other, ended by {NULL}; NULL: none. */
    const ld_opt_conflict *conflicts;

    const ld_column *columns; /* per-task results, in a result_size struct, a row per
                                 trade: a job with tasks of its own declares none */
    size_t ncolumns;
    size_t result_size;

    enum ld_table_col table[LD_TABLE_COLS_MAX]; /* LD_TABLE_END-terminated */
    enum ld_report reports[LD_REPORTS_MAX];     /* LD_REPORT_END-terminated */
    /* Named figures shown as columns of the main table, after `table`, and left out
     * of the figures table; NULL-terminated, or NULL for none. */
    const char *const *table_figures;
    const char *bound_name; /* LD_REPORT_BOUND: "critical path" */
    const char *bound_attr; /* LD_REPORT_BOUND: its attribute, "critical_path_ns" */
    const char *baseline;   /* LD_REPORT_SPEEDUP: the strategy it is taken over */

    /* Untimed set-up over the rank's tasks; *prepared is passed to every strategy
     * and then released. *bound_ns receives the job's physical lower bound on wall
     * time, or 0. A prepare that fails leaves nothing to release. */
    int (*prepare)(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                   void **prepared, int64_t *bound_ns);
    /* On every rank, after the job's last strategy: undo prepare. NULL: free(). */
    void (*release)(void *prepared);
    /* What the ranks of a job share, for a job that needs more than its options (a
     * service one rank runs for all, an address every rank must reach). On rank 0
     * only, before any rank prepares: set it up, keep in *state what unshare needs,
     * and describe it in blob[0..len), a NUL-terminated text of at most
     * LD_JOB_SHARED_MAX bytes that every rank's prepare then finds in cfg->shared.
     * host is how the other ranks reach rank 0: "127.0.0.1" when every rank runs on
     * its node, else the machine's host name. Returns 0, or a negative errno with one
     * line in blob saying why, and the run then fails on every rank. NULL: nothing
     * shared. */
    int (*share)(const ld_job_config *cfg, const char *host, char *blob, size_t len,
                 void **state);
    /* On rank 0, once every rank is done with the job (its last strategy, or a failure
     * after share succeeded): undo share, when it left a state. */
    void (*unshare)(void *state);
    /* --- Tasks: what the driver checks before any work, each refusal naming the
     * option that sets how many. A job's tasks are by default its trades: one per
     * trade of the rank's share of --trades, so a run needs a trade per rank. A job
     * with tasks of its own counts them in `tasks` (those of one rank under cfg) and
     * names in tasks_option the option of its own that sets them ("tasks", without
     * "--"); it uses no trades, runs on any number of ranks, and reports figures, not
     * per-task columns (a per-task dataset has a row per trade). */
    uint64_t (*tasks)(const ld_job_config *cfg);
    const char *tasks_option;
    /* The green-thread stacks strategy s needs for the rank's n tasks: the harness
     * reserves them in cfg->stacks before the clock (unless cfg->cold_stacks), and the
     * driver checks their address space. NULL: one per task for a carrier strategy,
     * none for the others. */
    uint64_t (*stacks)(const ld_job_config *cfg, const ld_strategy *s, uint64_t n);
    /* The resident bytes its heaviest strategy needs for the rank's n tasks, for the
     * check made before a run; NULL when that is small. */
    uint64_t (*resident_bytes)(const ld_job_config *cfg, size_t n);
    /* LD_ON_OWN strategies: the OS threads they run on under cfg. */
    unsigned (*threads_fn)(const ld_job_config *cfg, const ld_strategy *s);
    /* LD_REPORT_BOUND, for a job whose strategies have bounds of their own (one on a
     * thread cap below its tasks has a longer one): strategy s's lower bound under the
     * job's options `opts`, from prepare's bound_ns. NULL: every strategy has prepare's.
     */
    int64_t (*strategy_bound)(const void *opts, const ld_strategy *s, int64_t bound_ns);
    /* Untimed, around each measured run: enter puts the run under what the job's
     * options ask of the machine (a resource profile, job_profile.h), writes the CPUs,
     * carriers and workers it gets into *run (a copy of cfg, which the strategy is
     * then handed), may add named figures, and keeps in *scope what leave needs to
     * undo it after the probe has stopped. An enter that fails has undone itself.
     * NULL: the strategy runs under cfg. */
    int (*enter)(const ld_job_config *cfg, const ld_strategy *s, ld_job_config *run,
                 ld_figures *figures, void **scope);
    void (*leave)(void *scope, ld_figures *figures);
    /* For a job that measures some runs in a process of its own (one under a memory
     * limit, which the OOM killer enforces on the process it bounds): measure strategy
     * s under cfg there, as ld_job_measure would here, filling m and figures; 0, or a
     * negative errno. LD_JOB_MEASURE_HERE leaves the run to ld_job_measure. NULL: every
     * run is measured here. */
    int (*measure_apart)(const ld_job_config *cfg, const ld_strategy *s, ld_metrics *m,
                         ld_figures *figures);
    /* For a job whose runs go under a memory limit its options ask: the bytes the
     * process that runs strategy s under cfg needs before its first task, what they
     * are made of in what[0..whatlen) (a phrase), and the limit in *limit (0: none).
     * The driver refuses a limit below a selected strategy's floor before any work.
     * NULL: the job asks no limit. */
    uint64_t (*mem_floor)(const ld_job_config *cfg, const ld_strategy *s, uint64_t *limit,
                          char *what, size_t whatlen);
} ld_job;

/* measure_apart's answer for a run it leaves to ld_job_measure. */
#define LD_JOB_MEASURE_HERE 1

/* Every job, in the order the driver runs them. */
extern const ld_job *const ld_jobs[];
extern const size_t ld_njobs;

const ld_job *ld_job_find(const char *name);

/* Whether job keeps within the limits above, declares its tasks whole (tasks with
 * tasks_option, an option of its own, and then no per-task columns), and names no two
 * of its columns, strategies, options or table figures alike, nor two percentile
 * columns with one unit (their datasets are named by it): 0, or -EINVAL with one line
 * in err naming the job. */
int ld_job_check(const ld_job *job, char *err, size_t errlen);

/* ld_job_check for every job, at start: 0, or -EINVAL for the first that fails. */
int ld_jobs_check(char *err, size_t errlen);

/* The index of job in ld_jobs. */
size_t ld_job_index(const ld_job *job);
const ld_strategy *ld_job_strategy(const ld_job *job, const char *name);

/* The k-th column of job that has every flag in `flags`, or NULL past the last. */
const ld_column *ld_job_column(const ld_job *job, unsigned flags, size_t k);

/* Whether job declares report r. */
int ld_job_reports(const ld_job *job, enum ld_report r);

/* The bytes of one task's row across the job's declared columns. */
size_t ld_job_row_bytes(const ld_job *job);

/* The tasks job runs on a rank under cfg, given the rank's trades: its own, or one per
 * trade. */
uint64_t ld_job_tasks(const ld_job *job, const ld_job_config *cfg, uint64_t trades);

/* The option that sets how many tasks job runs, without "--": its tasks_option, or
 * "trades". */
const char *ld_job_tasks_option(const ld_job *job);

/* The green-thread stacks strategy s of job needs for n tasks (its stacks hook). */
uint64_t ld_job_stacks(const ld_job *job, const ld_job_config *cfg, const ld_strategy *s,
                       uint64_t n);

/* The address space one stack of those takes under cfg: in copy mode a chunk, else
 * the stack and its guard page. */
uint64_t ld_job_stack_bytes(const ld_job_config *cfg);

/* Strategy s's lower bound under the job's options opts, from prepare's bound_ns. */
int64_t ld_job_bound(const ld_job *job, const void *opts, const ld_strategy *s,
                     int64_t bound_ns);

/* The OS threads a strategy will run on under cfg: carriers, workers or its own. */
unsigned ld_job_threads(const ld_job *job, const ld_job_config *cfg,
                        const ld_strategy *s);

/* The CPUs a worker pool runs on: the rank's, cut to --workers when that is smaller,
 * or repeated round-robin when it is larger. */
void ld_job_worker_cpus(const ld_job_config *cfg, ld_cpus *out);

/* What a strategy keeps across its iterations, in *cfg: a depot of stacks
 * (cfg->stacks) and a holder for its carriers (cfg->kept), so that its runs reuse the
 * stacks and carrier threads, as a JVM's iterations reuse its heap and carriers; 0, or
 * a negative errno with whatever was made left for ld_job_strategy_close. */
int ld_job_strategy_open(ld_job_config *cfg);

/* End the carriers, then the stacks they hold: what ld_job_strategy_open made. */
void ld_job_strategy_close(ld_job_config *cfg);

/* Run one strategy once, measured: metrics cover exactly the run, and figures (which
 * may be NULL) receive whatever named figures it reports. n is the rank's trades, and
 * results has room for n of the job's result structs. A strategy finds cfg->stacks
 * holding the stacks it needs for the job's tasks (ld_job_stacks), reserved before
 * the clock, unless cfg->cold_stacks. */
int ld_job_measure(const ld_job *job, const ld_strategy *s, const ld_job_config *cfg,
                   const ld_trade *trades, size_t n, const void *prepared, void *results,
                   ld_metrics *m, ld_figures *figures);

#endif
