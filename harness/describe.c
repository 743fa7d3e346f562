/* describe.c: reading what a job declares about itself: option values and defaults,
 * column sizes, the reports it asks for, its tasks and their stacks; and the check
 * that a declaration keeps to the driver's limits and names each thing once. */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

double ld_opt_value(const ld_opt *o, const void *config)
{
    const char *at = (const char *)config + o->offset;
    uint64_t u;
    double d;
    int i;
    switch (o->type) {
    case LD_OPT_COUNT:
        memcpy(&u, at, sizeof u);
        return (double)u;
    case LD_OPT_REAL:
        memcpy(&d, at, sizeof d);
        return d;
    case LD_OPT_TEXT:
        for (i = 0; o->choices && o->choices[i]; i++)
            if (strcmp(at, o->choices[i]) == 0)
                return i;
        return -1;
    case LD_OPT_CHOICE:
    case LD_OPT_FLAG:
        break;
    }
    memcpy(&i, at, sizeof i);
    return i;
}

void ld_opt_defaults(const ld_opt *opts, size_t n, void *config)
{
    for (size_t k = 0; k < n; k++) {
        char *at = (char *)config + opts[k].offset;
        uint64_t u;
        int i;
        switch (opts[k].type) { /* each type converts the default it can hold */
        case LD_OPT_COUNT:
            u = (uint64_t)opts[k].def;
            memcpy(at, &u, sizeof u);
            break;
        case LD_OPT_REAL:
            memcpy(at, &opts[k].def, sizeof opts[k].def);
            break;
        case LD_OPT_CHOICE:
        case LD_OPT_FLAG:
            i = (int)opts[k].def;
            memcpy(at, &i, sizeof i);
            break;
        case LD_OPT_TEXT:
            snprintf(at, LD_OPT_TEXT_MAX, "%s", opts[k].choices[(int)opts[k].def]);
            break;
        }
    }
}

size_t ld_col_bytes(enum ld_col_type t)
{
    switch (t) {
    case LD_COL_I64:
    case LD_COL_F64:
        return 8;
    case LD_COL_U8:
    case LD_COL_I8:
        break;
    }
    return 1;
}

int64_t ld_col_i64(const ld_column *c, const void *result)
{
    const char *at = (const char *)result + c->offset;
    int64_t i64;
    double f64;
    switch (c->type) {
    case LD_COL_I64:
        memcpy(&i64, at, sizeof i64);
        return i64;
    case LD_COL_F64:
        memcpy(&f64, at, sizeof f64);
        return (int64_t)f64;
    case LD_COL_U8:
        return *(const uint8_t *)at;
    case LD_COL_I8:
        break;
    }
    return *(const int8_t *)at;
}

const ld_column *ld_job_column(const ld_job *job, unsigned flags, size_t k)
{
    for (size_t c = 0; c < job->ncolumns; c++)
        if ((job->columns[c].flags & flags) == flags && k-- == 0)
            return &job->columns[c];
    return NULL;
}

size_t ld_job_row_bytes(const ld_job *job)
{
    size_t bytes = 0;
    for (size_t k = 0; k < job->ncolumns; k++)
        bytes += ld_col_bytes(job->columns[k].type);
    return bytes;
}

int ld_job_reports(const ld_job *job, enum ld_report r)
{
    for (size_t k = 0; k < LD_REPORTS_MAX && job->reports[k] != LD_REPORT_END; k++)
        if (job->reports[k] == r)
            return 1;
    return 0;
}

int64_t ld_job_bound(const ld_job *job, const void *opts, const ld_strategy *s,
                     int64_t bound_ns)
{
    return job->strategy_bound ? job->strategy_bound(opts, s, bound_ns) : bound_ns;
}

uint64_t ld_job_tasks(const ld_job *job, const ld_job_config *cfg, uint64_t trades)
{
    return job->tasks ? job->tasks(cfg) : trades;
}

const char *ld_job_tasks_option(const ld_job *job)
{
    return job->tasks ? job->tasks_option : "trades";
}

uint64_t ld_job_stacks(const ld_job *job, const ld_job_config *cfg, const ld_strategy *s,
                       uint64_t n)
{
    if (job->stacks)
        return job->stacks(cfg, s, n);
    return s->threading == LD_ON_CARRIERS ? n : 0;
}

const ld_strategy *ld_job_strategy(const ld_job *job, const char *name)
{
    for (size_t s = 0; s < job->nstrategies; s++)
        if (strcmp(job->strategies[s].name, name) == 0)
            return &job->strategies[s];
    return NULL;
}

/* Whether job declares an option of this name. */
static int declares(const ld_job *job, const char *name)
{
    for (size_t k = 0; k < job->nopts; k++)
        if (strcmp(job->opts[k].name, name) == 0)
            return 1;
    return 0;
}

/* The k-th name of one of a job's tables, or NULL for an entry that has none there. */
typedef const char *(*name_of)(const ld_job *job, size_t k);

static const char *column_name(const ld_job *job, size_t k)
{
    return job->columns[k].name;
}

/* A percentile column's datasets are named by its unit (p50_<unit>, driver/h5out.c). */
static const char *percentile_unit(const ld_job *job, size_t k)
{
    return job->columns[k].flags & LD_COL_PERCENTILES ? job->columns[k].unit : NULL;
}

static const char *strategy_name(const ld_job *job, size_t k)
{
    return job->strategies[k].name;
}

static const char *option_name(const ld_job *job, size_t k)
{
    return job->opts[k].name;
}

static const char *table_figure(const ld_job *job, size_t k)
{
    return job->table_figures[k];
}

static size_t table_figures(const ld_job *job)
{
    size_t n = 0;
    while (job->table_figures && job->table_figures[n])
        n++;
    return n;
}

/* The first name that two of a job's n entries share, or NULL. */
static const char *repeated(const ld_job *job, size_t n, name_of name)
{
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; name(job, a) && b < n; b++)
            if (name(job, b) && strcmp(name(job, a), name(job, b)) == 0)
                return name(job, a);
    return NULL;
}

/* Each name the driver makes an option, a dataset, a group or a column of is one
 * entry's: "job JOB has two columns named NAME", or 0. */
static int check_names(const ld_job *job, char *err, size_t errlen)
{
    const struct {
        const char *what;
        size_t n;
        name_of name;
    } tables[] = {
        {"columns named", job->ncolumns, column_name},
        {"percentile columns (datasets p50_, p99_, max_<unit>) in the unit",
         job->ncolumns, percentile_unit},
        {"strategies named", job->nstrategies, strategy_name},
        {"options named", job->nopts, option_name},
        {"table figures named", table_figures(job), table_figure},
    };
    for (size_t k = 0; k < LD_LEN(tables); k++) {
        const char *name = repeated(job, tables[k].n, tables[k].name);
        if (name) {
            snprintf(err, errlen, "job %s has two %s %s", job->name, tables[k].what,
                     name);
            return -EINVAL;
        }
    }
    return 0;
}

int ld_job_check(const ld_job *job, char *err, size_t errlen)
{
    const struct {
        const char *what, *limit;
        size_t have, max;
    } limits[] = {
        {"strategies", "LD_MAX_STRATEGIES", job->nstrategies, LD_MAX_STRATEGIES},
        {"options", "LD_MAX_OPTS", job->nopts, LD_MAX_OPTS},
        {"bytes of config", "LD_JOB_CONFIG_MAX", job->config_size, LD_JOB_CONFIG_MAX},
        {"bytes of result", "LD_JOB_RESULT_MAX", job->result_size, LD_JOB_RESULT_MAX},
    };
    for (size_t k = 0; k < LD_LEN(limits); k++)
        if (limits[k].have > limits[k].max) {
            snprintf(err, errlen, "job %s has %zu %s, past %s (%zu): raise it in job.h",
                     job->name, limits[k].have, limits[k].what, limits[k].limit,
                     limits[k].max);
            return -EINVAL;
        }
    if (!job->tasks != !job->tasks_option ||
        (job->tasks_option && !declares(job, job->tasks_option))) {
        snprintf(err, errlen,
                 "job %s: tasks and tasks_option go together, and tasks_option names "
                 "one of its options",
                 job->name);
        return -EINVAL;
    }
    if (job->tasks && job->ncolumns) { /* a per-task dataset has a row per trade */
        snprintf(err, errlen,
                 "job %s counts tasks of its own (--%s), so it has no per-task columns: "
                 "report figures instead",
                 job->name, job->tasks_option);
        return -EINVAL;
    }
    return check_names(job, err, errlen);
}
