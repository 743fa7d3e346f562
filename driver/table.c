/* table.c: per job, one row per strategy, in the columns the job declares (the seed
 * study's Strategy, Tasks, Time (ms), Throughput (ops/s), Peak OS Threads, Memory,
 * plus the imbalance across ranks); then, unless --quiet, a detail line per strategy
 * with the derived figures the job declares: its lower bound, percentiles of its
 * columns, time per trade, speedup over its own baseline. Named figures get a table
 * of their own.
 *
 * One basis throughout: times are means over the measured iterations (per rank, then
 * across ranks); peaks are the largest over the iterations. */
#include "table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "stats.h"

/* One strategy, reduced across ranks (on rank 0) and summarised across iterations. */
typedef struct row {
    ld_summary makespan_ms; /* the slowest rank's wall time, per iteration */
    ld_summary ops;         /* operations per second, an iteration being one */
    double imbalance;       /* mean over iterations of max/avg wall across ranks */
    int64_t peak_threads;   /* the most any one rank had, in any iteration */
    double rss_total_mib;   /* the largest sum over ranks of peak RSS, any iteration */
    double rss_max_mib;     /* the largest peak RSS of one rank, any iteration */
    double wall_min_ms, wall_avg_ms, wall_max_ms; /* across ranks of per-rank means */
    double cpu_s;                                 /* user + system, all ranks, mean */
    int have_pct;                                 /* the gather below succeeded */
    int64_t pct[LD_REPORTS_MAX][LD_PCTS]; /* percentile columns, all trades, last it. */
    double figures[LD_FIGURES_MAX];       /* mean over iterations and ranks */
} row;

#define FIELD(name) (offsetof(ld_metrics, name) / sizeof(int64_t))

/* One metric per iteration, reduced across ranks with op into out[iterations]. */
static void reduce_iter(MPI_Comm comm, const ld_record *r, size_t field, MPI_Op op,
                        int64_t *out)
{
    for (unsigned it = 0; it < r->iterations; it++) {
        int64_t v = ld_metrics_get(&r->metrics[it], field);
        MPI_Reduce(&v, &out[it], 1, MPI_INT64_T, op, 0, comm);
    }
}

static int64_t largest(const int64_t *v, unsigned n)
{
    int64_t m = 0;
    for (unsigned i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* This rank's mean of one metric over the iterations. */
static double rank_mean(const ld_record *r, size_t field)
{
    double sum = 0;
    for (unsigned it = 0; it < r->iterations; it++)
        sum += (double)ld_metrics_get(&r->metrics[it], field);
    return r->iterations ? sum / r->iterations : 0;
}

/* Percentile column k's values from every rank, last iteration, on rank 0. Every rank
 * learns first whether rank 0 could hold them, so the gather is all or nothing. */
static void gather_percentiles(MPI_Comm comm, const ld_options *o, const ld_share *share,
                               const ld_record *r, size_t k, row *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const ld_column *c = ld_job_column(r->job, LD_COL_PERCENTILES, k);
    int64_t *mine = malloc((share->n ? share->n : 1) * sizeof *mine);
    int *counts = rank == 0 ? malloc((size_t)size * sizeof *counts) : NULL;
    int *displs = rank == 0 ? malloc((size_t)size * sizeof *displs) : NULL;
    int64_t *all = rank == 0 ? malloc(o->trades * sizeof *all) : NULL;
    int here = mine && (rank != 0 || (counts && displs && all)), ok = 0;
    MPI_Allreduce(&here, &ok, 1, MPI_INT, MPI_LAND, comm);
    ok = ok && mine && (rank != 0 || (counts && displs && all)); /* as here, spelt out */
    out->have_pct = ok;
    if (ok) {
        for (size_t i = 0; i < share->n; i++)
            mine[i] = ld_col_i64(c, (const char *)r->results + i * r->job->result_size);
        int n = (int)share->n;
        MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
        for (int q = 0, at = 0; rank == 0 && q < size; at += counts[q++])
            displs[q] = at;
        MPI_Gatherv(mine, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, comm);
    }
    if (ok && rank == 0) {
        ld_pcts_of(o->trades, ld_i64_at, all, out->pct[k]);
    }
    free(mine);
    free(counts);
    free(displs);
    free(all);
}

/* Each named figure, averaged over iterations here and then over ranks: figure k is
 * one name in every iteration on every rank, as run.c put them in one order. */
static void reduce_figures(MPI_Comm comm, const ld_record *r, row *out)
{
    size_t n = r->iterations ? r->figures[0].n : 0;
    double mine[LD_FIGURES_MAX] = {0};
    int size;
    MPI_Comm_size(comm, &size);
    for (size_t k = 0; k < n; k++) {
        for (unsigned it = 0; it < r->iterations; it++)
            mine[k] += r->figures[it].v[k].value / r->iterations;
        mine[k] /= size;
    }
    if (n)
        MPI_Reduce(mine, out->figures, (int)n, MPI_DOUBLE, MPI_SUM, 0, comm);
}

/* The per-rank means of wall and CPU time, spread across ranks. */
static void reduce_means(MPI_Comm comm, const ld_record *r, row *out)
{
    int size;
    MPI_Comm_size(comm, &size);
    double wall = rank_mean(r, FIELD(wall_ns)) / 1e6, min = 0, sum = 0, max = 0;
    double cpu = (rank_mean(r, FIELD(utime_us)) + rank_mean(r, FIELD(stime_us))) / 1e6;
    MPI_Reduce(&wall, &min, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
    MPI_Reduce(&wall, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Reduce(&wall, &max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(&cpu, &out->cpu_s, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    out->wall_min_ms = min;
    out->wall_avg_ms = sum / size;
    out->wall_max_ms = max;
}

/* Makespan and imbalance per iteration, then the peaks over iterations. Returns -1
 * (on every rank) when rank 0 has no room to reduce into. */
static int reduce_iterations(MPI_Comm comm, const ld_record *r, row *out)
{
    unsigned its = r->iterations;
    int size;
    MPI_Comm_size(comm, &size);
    int64_t *max = calloc(its, sizeof *max), *sum = calloc(its, sizeof *sum);
    double *ms = calloc(its, sizeof *ms);
    int here = max && sum && ms, ok = 0;
    MPI_Allreduce(&here, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (ok && max && sum && ms) {
        reduce_iter(comm, r, FIELD(wall_ns), MPI_MAX, max);
        reduce_iter(comm, r, FIELD(wall_ns), MPI_SUM, sum);
        for (unsigned it = 0; it < its; it++) {
            ms[it] = (double)max[it] / 1e6;
            out->imbalance +=
                sum[it] ? (double)max[it] * size / (double)sum[it] / its : 0;
        }
        out->makespan_ms = ld_summarize(ms, its);
        for (unsigned it = 0; it < its; it++)
            ms[it] = ms[it] > 0 ? 1e3 / ms[it] : 0;
        out->ops = ld_summarize(ms, its);
        reduce_iter(comm, r, FIELD(peak_threads), MPI_MAX, max);
        out->peak_threads = largest(max, its);
        reduce_iter(comm, r, FIELD(peak_rss_kib), MPI_SUM, sum);
        reduce_iter(comm, r, FIELD(peak_rss_kib), MPI_MAX, max);
        out->rss_total_mib = (double)largest(sum, its) / 1024;
        out->rss_max_mib = (double)largest(max, its) / 1024;
    }
    free(max);
    free(sum);
    free(ms);
    return ok ? 0 : -1;
}

static int reduce_row(MPI_Comm comm, const ld_options *o, const ld_share *share,
                      const ld_record *r, row *out)
{
    memset(out, 0, sizeof *out);
    if (reduce_iterations(comm, r, out) != 0)
        return -1;
    reduce_means(comm, r, out);
    for (size_t k = 0; k < r->npct && k < LD_REPORTS_MAX; k++)
        gather_percentiles(comm, o, share, r, k, out);
    reduce_figures(comm, r, out);
    return 0;
}

/* "431.2" alone, or "431.2 ± 3.1" once there are enough iterations for a CI. */
static void format_summary(const ld_summary *s, int prec, char *out, size_t len)
{
    if (s->n >= 3)
        snprintf(out, len, "%.*f ± %.*f", prec, s->mean, prec, s->half_width);
    else
        snprintf(out, len, "%.*f", prec, s->mean);
}

/* A rate below 10 keeps three decimals, so that 0.128 ops/s does not read 0.1. */
static int rate_precision(double rate)
{
    return rate < 10 ? 3 : 1;
}

/* The lower bound as a rate, and the score against it: "100.0 (97.3%)". */
static void format_limit(const ld_options *o, const ld_record *r, const row *w, char *out,
                         size_t len)
{
    int64_t bound = ld_record_bound(o, r);
    double limit = bound > 0 ? 1e9 / (double)bound : 0;
    if (limit > 0)
        snprintf(out, len, "%.*f (%.1f%%)", rate_precision(limit), limit,
                 100 * w->ops.mean / limit);
    else
        snprintf(out, len, "none");
}

/* Each main-table column: its header, its width, and how a row fills it. */
typedef struct table_col {
    const char *header;
    int width;
} table_col;

static const table_col table_cols[] = {
    [LD_TABLE_TASKS] = {"Tasks", 9},
    [LD_TABLE_TIME] = {"Time (ms)", 18},
    [LD_TABLE_THROUGHPUT] = {"Throughput (ops/s)", 18},
    [LD_TABLE_THREADS] = {"Peak OS Threads (max rank)", 26},
    [LD_TABLE_MEMORY] = {"Memory MiB: all ranks (max rank)", 32},
    [LD_TABLE_IMBALANCE] = {"Imbalance", 9},
    [LD_TABLE_OPS] = {"Score (ops/s)", 18},
    [LD_TABLE_LIMIT] = {"Limit ops/s (of it)", 20},
};

/* The width of the strategy column: 14, or the job's longest strategy name. */
static int name_width(const ld_job *job)
{
    size_t w = 14;
    for (size_t s = 0; s < job->nstrategies; s++)
        w = strlen(job->strategies[s].name) > w ? strlen(job->strategies[s].name) : w;
    return (int)w;
}

/* The width of a named figure's column: its name's, and at least 10. */
static int figure_width(const char *name)
{
    return strlen(name) > 10 ? (int)strlen(name) : 10;
}

/* Whether the job shows the figure called name as a column of its main table. */
static int figure_in_table(const ld_job *job, const char *name)
{
    for (size_t k = 0; job->table_figures && job->table_figures[k]; k++)
        if (strcmp(job->table_figures[k], name) == 0)
            return 1;
    return 0;
}

static void print_header(FILE *out, const ld_job *job)
{
    fprintf(out, "\n%s: %s\n%-*s", job->name, job->summary, name_width(job), "Strategy");
    for (size_t k = 0; k < LD_TABLE_COLS_MAX && job->table[k] != LD_TABLE_END; k++)
        fprintf(out, " %*s", table_cols[job->table[k]].width,
                table_cols[job->table[k]].header);
    for (size_t k = 0; job->table_figures && job->table_figures[k]; k++)
        fprintf(out, " %*s", figure_width(job->table_figures[k]), job->table_figures[k]);
    fprintf(out, "\n");
}

static void format_cell(enum ld_table_col c, const ld_options *o, const ld_record *r,
                        const row *w, char *cell, size_t len)
{
    switch (c) {
    case LD_TABLE_TASKS:
        snprintf(cell, len, "%llu", (unsigned long long)o->trades);
        return;
    case LD_TABLE_TIME:
        format_summary(&w->makespan_ms, 1, cell, len);
        return;
    case LD_TABLE_THROUGHPUT:
        snprintf(cell, len, "%.0f",
                 w->makespan_ms.mean > 0 ? (double)o->trades / (w->makespan_ms.mean / 1e3)
                                         : 0);
        return;
    case LD_TABLE_THREADS:
        snprintf(cell, len, "%lld", (long long)w->peak_threads);
        return;
    case LD_TABLE_MEMORY:
        snprintf(cell, len, "%.1f (%.1f)", w->rss_total_mib, w->rss_max_mib);
        return;
    case LD_TABLE_IMBALANCE:
        snprintf(cell, len, "%.2f", w->imbalance);
        return;
    case LD_TABLE_OPS:
        format_summary(&w->ops, rate_precision(w->ops.mean), cell, len);
        return;
    case LD_TABLE_LIMIT:
        format_limit(o, r, w, cell, len);
        return;
    case LD_TABLE_END:
        break;
    }
    cell[0] = '\0';
}

static void print_row(FILE *out, const ld_options *o, const ld_record *r, const row *w)
{
    fprintf(out, "%-*s", name_width(r->job), r->strategy->name);
    for (size_t k = 0; k < LD_TABLE_COLS_MAX && r->job->table[k] != LD_TABLE_END; k++) {
        char cell[64];
        format_cell(r->job->table[k], o, r, w, cell, sizeof cell);
        fprintf(out, " %*s", table_cols[r->job->table[k]].width, cell);
    }
    for (size_t k = 0; r->job->table_figures && r->job->table_figures[k]; k++) {
        const char *name = r->job->table_figures[k];
        size_t f = 0;
        while (r->iterations && f < r->figures[0].n &&
               strcmp(r->figures[0].v[f].name, name) != 0)
            f++;
        if (r->iterations && f < r->figures[0].n)
            fprintf(out, w->figures[f] >= 1e4 ? " %*.0f" : " %*.4g", figure_width(name),
                    w->figures[f]);
        else
            fprintf(out, " %*s", figure_width(name), "-");
    }
    fprintf(out, "\n");
}

/* Whether any of run->rec[i, end) reported a named figure. */
static int any_figures(const ld_run *run, size_t i, size_t end)
{
    for (; i < end; i++)
        if (run->rec[i].iterations && run->rec[i].figures[0].n)
            return 1;
    return 0;
}

/* The named figures of a job's strategies that its main table does not show:
 * Strategy, Figure, Value, Unit. */
static void print_figures_table(FILE *out, const ld_run *run, const row *rows, size_t i,
                                size_t end)
{
    fprintf(out, "\n%s figures (mean over iterations and ranks)\n",
            run->rec[i].job->name);
    int width = name_width(run->rec[i].job);
    fprintf(out, "%-*s %-22s %14s  %s\n", width, "Strategy", "Figure", "Value", "Unit");
    for (; i < end; i++) {
        const ld_record *r = &run->rec[i];
        for (size_t k = 0; r->iterations && k < r->figures[0].n; k++)
            if (!figure_in_table(r->job, r->figures[0].v[k].name))
                fprintf(out, "%-*s %-22s %14.4g  %s\n", width, r->strategy->name,
                        r->figures[0].v[k].name, rows[i].figures[k],
                        r->figures[0].v[k].unit);
    }
}

/* The lower bound the job declares, and how far the makespan is above it. */
static void print_bound(FILE *out, const ld_options *o, const ld_record *r, const row *w)
{
    double bound = (double)ld_record_bound(o, r) / 1e6;
    fprintf(out, "; %s %.1f ms, overhead %+.1f ms (%.3fx)", r->job->bound_name, bound,
            w->makespan_ms.mean - bound, bound > 0 ? w->makespan_ms.mean / bound : 0);
}

/* "latency p50 2.8, p99 4.4, max 4.6 ms" for each percentile column: a column in ns
 * prints in ms, under its name less the unit's suffix. */
static void print_percentiles(FILE *out, const ld_record *r, const row *w)
{
    for (size_t k = 0; k < r->npct && k < LD_REPORTS_MAX && w->have_pct; k++) {
        const ld_column *c = ld_job_column(r->job, LD_COL_PERCENTILES, k);
        int ns = strcmp(c->unit, "ns") == 0;
        size_t len = strlen(c->name);
        if (len > 3 && ns && strcmp(c->name + len - 3, "_ns") == 0)
            len -= 3;
        double div = ns ? 1e6 : 1;
        fprintf(out, "; %.*s p50 %.1f, p99 %.1f, max %.1f %s", (int)len, c->name,
                (double)w->pct[k][LD_PCT_P50] / div, (double)w->pct[k][LD_PCT_P99] / div,
                (double)w->pct[k][LD_PCT_MAX] / div, ns ? "ms" : c->unit);
    }
}

static void print_per_task(FILE *out, const ld_options *o, const ld_record *r,
                           const row *w, int ranks)
{
    fprintf(out, "; %.3f ms per trade per rank, %u thread(s) per rank",
            w->makespan_ms.mean * ranks / (double)o->trades, r->threads);
}

/* Speedup over the job's own baseline, said with what it can and cannot show: inside
 * the two CIs it is noise; above the thread count it is no result at all. */
static void print_speedup(FILE *out, const ld_record *r, const row *w, const row *base)
{
    if (!base || w->makespan_ms.mean <= 0)
        return;
    if (strcmp(r->strategy->name, r->job->baseline) == 0) {
        fprintf(out, "; the baseline of the speedups");
        return;
    }
    double speedup = base->makespan_ms.mean / w->makespan_ms.mean;
    fprintf(out, "; speedup %.2fx over %s, parallel efficiency %.2f", speedup,
            r->job->baseline, speedup / r->threads);
    if (speedup > r->threads)
        fprintf(out,
                " [above its %u thread(s): not a result; try --warmup 1 and "
                "--iterations 3]",
                r->threads);
    else if (w->makespan_ms.n < 3 || base->makespan_ms.n < 3)
        fprintf(out, " (noise unknown below 3 iterations)");
    else if (fabs(speedup - 1) <=
             speedup * (w->makespan_ms.half_width / w->makespan_ms.mean +
                        base->makespan_ms.half_width / base->makespan_ms.mean))
        fprintf(out, " (within noise)");
}

/* The row of job's baseline strategy among run->rec[first, end), or NULL. */
static const row *baseline_row(const ld_run *run, const row *rows, size_t first,
                               size_t end)
{
    const char *base = run->rec[first].job->baseline;
    for (size_t i = first; base && i < end; i++)
        if (strcmp(run->rec[i].strategy->name, base) == 0)
            return &rows[i];
    return NULL;
}

/* A strategy's detail line: its spread across ranks, then what its job reports. */
static void print_detail(FILE *out, const ld_options *o, const ld_record *r, const row *w,
                         const row *base, int ranks)
{
    fprintf(out,
            "  %-*s ranks %.1f/%.1f/%.1f ms (min/avg/max of %u-iteration means), "
            "CPU %.2f s",
            name_width(r->job), r->strategy->name, w->wall_min_ms, w->wall_avg_ms,
            w->wall_max_ms, r->iterations, w->cpu_s);
    for (size_t k = 0; k < LD_REPORTS_MAX && r->job->reports[k] != LD_REPORT_END; k++) {
        switch (r->job->reports[k]) {
        case LD_REPORT_BOUND:
            print_bound(out, o, r, w);
            break;
        case LD_REPORT_PERCENTILES:
            print_percentiles(out, r, w);
            break;
        case LD_REPORT_PER_TASK:
            print_per_task(out, o, r, w, ranks);
            break;
        case LD_REPORT_SPEEDUP:
            print_speedup(out, r, w, base);
            break;
        case LD_REPORT_FIGURES:
        case LD_REPORT_END:
            break;
        }
    }
    fprintf(out, "\n");
}

/* The end of the run of records that belong to the job of record i. */
static size_t job_end(const ld_run *run, size_t i)
{
    size_t end = i;
    while (end < run->n && run->rec[end].job == run->rec[i].job)
        end++;
    return end;
}

static void print_tables(FILE *out, const ld_options *o, const ld_run *run,
                         const row *rows)
{
    for (size_t i = 0, end; i < run->n; i = end) {
        end = job_end(run, i);
        print_header(out, run->rec[i].job);
        for (size_t k = i; k < end; k++)
            print_row(out, o, &run->rec[k], &rows[k]);
        if (ld_job_reports(run->rec[i].job, LD_REPORT_FIGURES) &&
            any_figures(run, i, end))
            print_figures_table(out, run, rows, i, end);
    }
}

static void print_details(FILE *out, const ld_options *o, const ld_run *run,
                          const row *rows, int ranks)
{
    fprintf(out, "\n");
    for (size_t i = 0, end; i < run->n; i = end) {
        end = job_end(run, i);
        const row *base = baseline_row(run, rows, i, end);
        for (size_t k = i; k < end; k++)
            print_detail(out, o, &run->rec[k], &rows[k], base, ranks);
    }
}

void ld_table_print(MPI_Comm comm, const ld_options *o, const ld_share *share,
                    const ld_run *run, FILE *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    row *rows = calloc(run->n ? run->n : 1, sizeof *rows);
    int here = rows != NULL, ok = 0;
    MPI_Allreduce(&here, &ok, 1, MPI_INT, MPI_LAND, comm);
    for (size_t i = 0; ok && rows && i < run->n; i++)
        ok = reduce_row(comm, o, share, &run->rec[i], &rows[i]) == 0;
    if (rank == 0 && !ok)
        fprintf(stderr, "loomdist: out of memory reducing the results table\n");
    if (rank == 0 && ok && rows) {
        print_tables(out, o, run, rows);
        if (!o->quiet)
            print_details(out, o, run, rows, size);
        fflush(out);
    }
    free(rows);
}

void ld_table_phases(MPI_Comm comm, const ld_options *o, const ld_phases *ph, FILE *out)
{
    int64_t v[LD_PHASES + 1], max[LD_PHASES + 1];
    for (int k = 0; k < LD_PHASES; k++)
        v[k] = ph->ns[k];
    v[LD_PHASES] = ld_phases_total(ph);
    MPI_Reduce(v, max, LD_PHASES + 1, MPI_INT64_T, MPI_MAX, 0, comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0 || o->quiet)
        return;
    fprintf(out, "loomdist: phases (ms, the slowest rank's):");
    for (int k = 0; k < LD_PHASES; k++)
        fprintf(out, " %s %.1f%s", ld_phase_names[k], (double)max[k] / 1e6,
                k + 1 < LD_PHASES ? "," : ";");
    double wall = (double)max[LD_PHASES];
    fprintf(out, " wall %.1f, write %.2f%% of it\n", wall / 1e6,
            wall > 0 ? 100.0 * (double)max[LD_PHASE_WRITE] / wall : 0.0);
}
