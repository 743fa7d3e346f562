/* schema.c: the per-job part of the HDF5 layout, from the declarations the writer
 * walks: options with LD_OPT_RESULT, each job's columns, the metrics. */
#include "schema.h"

#include <string.h>

#include "metrics.h"
#include "options.h"

static const char *opt_type(const ld_opt *o)
{
    switch (o->type) {
    case LD_OPT_COUNT:
        return "uint64";
    case LD_OPT_REAL:
        return "double";
    case LD_OPT_CHOICE:
    case LD_OPT_TEXT:
        return "string";
    case LD_OPT_FLAG:
        break;
    }
    return "int32";
}

static const char *col_type(enum ld_col_type t)
{
    switch (t) {
    case LD_COL_I64:
        return "int64";
    case LD_COL_F64:
        return "double";
    case LD_COL_U8:
        return "uint8";
    case LD_COL_I8:
        break;
    }
    return "int8";
}

/* One row per option that changes a result: its attribute, type and help line. */
static void print_options(FILE *out, const char *owner, const ld_opt *opts, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (!(opts[k].flags & LD_OPT_RESULT))
            continue;
        char name[64];
        snprintf(name, sizeof name, "%s", opts[k].attr ? opts[k].attr : opts[k].name);
        for (char *p = name; *p; p++)
            *p = *p == '-' ? '_' : *p;
        fprintf(out, "| `%s` | %s | %s | `--%s`: %s |\n", name, opt_type(&opts[k]), owner,
                opts[k].name, opts[k].help);
    }
}

static void print_job(FILE *out, const ld_job *job)
{
    fprintf(out, "\n**/%s/<strategy>** adds", job->name);
    if (ld_job_reports(job, LD_REPORT_BOUND))
        fprintf(out, " the attribute `%s` (int64 ns: the %s)", job->bound_attr,
                job->bound_name);
    fprintf(out,
            "\n\n| dataset | type | unit | shape | meaning |\n|---|---|---|---|---|\n");
    for (size_t c = 0; c < job->ncolumns; c++)
        fprintf(out, "| `%s` | %s | %s | [trades] | %s |\n", job->columns[c].name,
                col_type(job->columns[c].type), job->columns[c].unit,
                job->columns[c].doc);
    const ld_column *pc;
    for (size_t k = 0; (pc = ld_job_column(job, LD_COL_PERCENTILES, k)); k++)
        fprintf(out,
                "| `p50_%s`, `p99_%s`, `max_%s` | int64 | %s | [iterations, ranks] | "
                "the rank's percentiles of `%s` |\n",
                pc->unit, pc->unit, pc->unit, pc->unit, pc->name);
    if (ld_job_reports(job, LD_REPORT_FIGURES))
        fprintf(out, "| one per named figure | double | its own | [iterations, ranks] | "
                     "see below |\n");
}

void ld_schema_print(FILE *out)
{
    size_t n;
    const ld_opt *common = ld_options_common(&n);
    fprintf(out, "**Root attributes from options** (a job's only when it ran; "
                 "`result_options` lists those present)\n\n"
                 "| attribute | type | of | option |\n|---|---|---|---|\n");
    print_options(out, "all", common, n);
    for (size_t j = 0; j < ld_njobs; j++)
        print_options(out, ld_jobs[j]->name, ld_jobs[j]->opts, ld_jobs[j]->nopts);
    fprintf(out, "\n**Every /<job>** has the attribute `result_options` (string): the "
                 "root attributes its results depend on, the driver's options and its "
                 "own.\n");
    fprintf(out, "\n**Every /<job>/<strategy>**: attributes `job`, `strategy` (string), "
                 "`tasks` (uint64), `threads` (int32: the OS threads it runs on), "
                 "`iteration_kept` (int32: the measured iteration the [trades] datasets "
                 "come from, the last)\n\n"
                 "| dataset | type | unit | shape | meaning |\n|---|---|---|---|---|\n");
    for (size_t k = 0; k < LD_METRICS_N; k++)
        fprintf(out, "| `%s` | int64 | %s | [iterations, ranks] | %s |\n",
                ld_metrics_fields[k].name, ld_metrics_fields[k].unit,
                ld_metrics_fields[k].doc);
    for (size_t j = 0; j < ld_njobs; j++)
        print_job(out, ld_jobs[j]);
}
