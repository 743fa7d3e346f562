/* table.c: per job, one row per strategy: Strategy, Tasks, Time (ms), Throughput
 * (ops/s), Peak OS Threads, Memory, as the seed study printed them, plus what it left
 * out: the spread across iterations, the imbalance across ranks, and each job's own
 * yardstick (the critical path for settle, sequential time for var). */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* One strategy, reduced across ranks (on rank 0) and summarised across iterations. */
typedef struct row {
    ld_summary makespan_ms; /* the slowest rank's wall time */
    double imbalance;       /* mean over iterations of max/avg wall across ranks */
    int64_t peak_threads;   /* the most any rank had */
    double rss_total_mib, rss_max_mib;
    double wall_min_ms, wall_avg_ms, wall_max_ms; /* across ranks, last iteration */
    double cpu_s;                                 /* user + system, all ranks */
    int64_t p50, p99, max;
    double figures[LD_FIGURES_MAX]; /* mean over iterations and ranks */
} row;

/* Reduce one metric column across ranks: max and sum, per iteration. */
static void reduce_iter(MPI_Comm comm, const ld_record *r, size_t field, int64_t *max,
                        int64_t *sum)
{
    for (unsigned it = 0; it < r->iterations; it++) {
        int64_t v = ((const int64_t *)&r->metrics[it])[field];
        MPI_Reduce(&v, &max[it], 1, MPI_INT64_T, MPI_MAX, 0, comm);
        MPI_Reduce(&v, &sum[it], 1, MPI_INT64_T, MPI_SUM, 0, comm);
    }
}

#define FIELD(name) (offsetof(ld_metrics, name) / sizeof(int64_t))

/* Gather the last iteration's latencies on rank 0 for percentiles over all trades. */
static void global_latencies(MPI_Comm comm, const ld_options *o, const ld_share *share,
                             const ld_record *r, row *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t *mine = malloc((share->n ? share->n : 1) * sizeof *mine);
    int *counts = rank == 0 ? malloc((size_t)size * sizeof *counts) : NULL;
    int *displs = rank == 0 ? malloc((size_t)size * sizeof *displs) : NULL;
    int64_t *all = rank == 0 ? malloc(o->trades * sizeof *all) : NULL;
    for (size_t i = 0; mine && i < share->n; i++)
        mine[i] = r->results[i].latency_ns;
    int n = (int)share->n;
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    for (int k = 0, at = 0; rank == 0 && k < size; at += counts[k++])
        displs[k] = at;
    MPI_Gatherv(mine, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, comm);
    if (rank == 0) {
        ld_sort_i64(all, o->trades);
        out->p50 = ld_percentile_sorted(all, o->trades, 0.50);
        out->p99 = ld_percentile_sorted(all, o->trades, 0.99);
        out->max = all[o->trades - 1];
    }
    free(mine);
    free(counts);
    free(displs);
    free(all);
}

/* Each named figure, averaged over iterations here and then over ranks. */
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

static void reduce_row(MPI_Comm comm, const ld_options *o, const ld_share *share,
                       const ld_record *r, row *out)
{
    unsigned its = r->iterations;
    int size;
    MPI_Comm_size(comm, &size);
    int64_t *max = calloc(its, sizeof *max), *sum = calloc(its, sizeof *sum);
    double *ms = calloc(its, sizeof *ms);
    memset(out, 0, sizeof *out);
    reduce_iter(comm, r, FIELD(wall_ns), max, sum);
    int64_t last = r->metrics[its - 1].wall_ns, min_last = 0;
    MPI_Reduce(&last, &min_last, 1, MPI_INT64_T, MPI_MIN, 0, comm);
    out->wall_min_ms = (double)min_last / 1e6;
    out->wall_avg_ms = (double)sum[its - 1] / size / 1e6;
    out->wall_max_ms = (double)max[its - 1] / 1e6;
    for (unsigned it = 0; it < its; it++) {
        ms[it] = (double)max[it] / 1e6;
        out->imbalance += sum[it] ? (double)max[it] * size / (double)sum[it] / its : 0;
    }
    out->makespan_ms = ld_summarize(ms, its);
    reduce_iter(comm, r, FIELD(peak_threads), max, sum);
    out->peak_threads = max[its - 1];
    reduce_iter(comm, r, FIELD(peak_rss_kib), max, sum);
    out->rss_total_mib = (double)sum[its - 1] / 1024;
    out->rss_max_mib = (double)max[its - 1] / 1024;
    reduce_iter(comm, r, FIELD(utime_us), max, sum);
    out->cpu_s = (double)sum[its - 1] / 1e6;
    reduce_iter(comm, r, FIELD(stime_us), max, sum);
    out->cpu_s += (double)sum[its - 1] / 1e6;
    if (r->job->fields & LD_FIELDS_SETTLE)
        global_latencies(comm, o, share, r, out);
    reduce_figures(comm, r, out);
    free(max);
    free(sum);
    free(ms);
}

/* "431.2" alone, or "431.2 ± 3.1" once there are enough iterations for a CI. */
static void format_time(const ld_summary *s, char *out, size_t len)
{
    if (s->n >= 3)
        snprintf(out, len, "%.1f ± %.1f", s->mean, s->half_width);
    else
        snprintf(out, len, "%.1f", s->mean);
}

static void print_header(FILE *out, const ld_record *r)
{
    fprintf(out, "\n%s: %s\n", r->job->name, r->job->summary);
    fprintf(out, "%-14s %9s %18s %18s %15s %22s %9s\n", "Strategy", "Tasks", "Time (ms)",
            "Throughput (ops/s)", "Peak OS Threads", "Memory (MiB, max/rank)",
            "Imbalance");
}

static void print_row(FILE *out, const ld_options *o, const ld_record *r, const row *w)
{
    char t[48];
    format_time(&w->makespan_ms, t, sizeof t);
    double thr =
        w->makespan_ms.mean > 0 ? (double)o->trades / (w->makespan_ms.mean / 1e3) : 0;
    char mem[48];
    snprintf(mem, sizeof mem, "%.1f (%.1f)", w->rss_total_mib, w->rss_max_mib);
    fprintf(out, "%-14s %9llu %18s %18.0f %15lld %22s %9.2f\n", r->strategy->name,
            (unsigned long long)o->trades, t, thr, (long long)w->peak_threads, mem,
            w->imbalance);
}

/* What every strategy's second line starts with: wall time across ranks and CPU. */
static void print_spread(FILE *out, const ld_record *r, const row *w)
{
    fprintf(out, "  %-14s ranks %.1f/%.1f/%.1f ms (min/avg/max), CPU %.2f s;",
            r->strategy->name, w->wall_min_ms, w->wall_avg_ms, w->wall_max_ms, w->cpu_s);
}

/* Each job's yardstick: settle against its critical path, var against sequential. */
static void print_settle_extra(FILE *out, const ld_record *r, const row *w)
{
    double path = (double)r->bound_ns / 1e6;
    print_spread(out, r, w);
    fprintf(out,
            " critical path %.1f ms, overhead %+.1f ms (%.3fx); latency p50 %.1f, "
            "p99 %.1f, max %.1f ms\n",
            path, w->makespan_ms.mean - path, path > 0 ? w->makespan_ms.mean / path : 0,
            (double)w->p50 / 1e6, (double)w->p99 / 1e6, (double)w->max / 1e6);
}

/* A rank's wall time per trade it holds, and the speedup over sequential on the same
 * ranks; efficiency divides that by the threads each rank ran. */
static void print_var_extra(FILE *out, const ld_options *o, const ld_record *r,
                            const row *w, double seq_ms, int ranks)
{
    print_spread(out, r, w);
    fprintf(out, " %.3f ms per trade per rank, %u thread(s) per rank",
            w->makespan_ms.mean * ranks / (double)o->trades, r->threads);
    if (seq_ms > 0)
        fprintf(out, ", speedup %.2fx, parallel efficiency %.2f",
                seq_ms / w->makespan_ms.mean, seq_ms / w->makespan_ms.mean / r->threads);
    fprintf(out, "\n");
}

/* A strategy that reports named figures: each as name, value and unit, ranks averaged. */
static void print_figures(FILE *out, const ld_record *r, const row *w)
{
    print_spread(out, r, w);
    for (size_t k = 0; k < r->figures[0].n; k++) {
        const ld_figure *f = &r->figures[0].v[k];
        fprintf(out, "%s %s %.4g %s", k ? "," : "", f->name, w->figures[k], f->unit);
    }
    fprintf(out, "\n");
}

void ld_table_print(MPI_Comm comm, const ld_options *o, const ld_share *share,
                    const ld_run *run, FILE *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    row *rows = calloc(run->n ? run->n : 1, sizeof *rows);
    for (size_t i = 0; i < run->n; i++)
        reduce_row(comm, o, share, &run->rec[i], &rows[i]);
    if (rank == 0) {
        for (size_t i = 0; i < run->n; i++) {
            if (i == 0 || run->rec[i].job != run->rec[i - 1].job)
                print_header(out, &run->rec[i]);
            print_row(out, o, &run->rec[i], &rows[i]);
        }
        double seq_ms = 0;
        for (size_t i = 0; i < run->n; i++)
            if (run->rec[i].job->baseline &&
                strcmp(run->rec[i].strategy->name, run->rec[i].job->baseline) == 0)
                seq_ms = rows[i].makespan_ms.mean;
        fprintf(out, "\n");
        for (size_t i = 0; i < run->n; i++) {
            if (run->rec[i].iterations && run->rec[i].figures[0].n)
                print_figures(out, &run->rec[i], &rows[i]);
            else if (run->rec[i].job->fields & LD_FIELDS_SETTLE)
                print_settle_extra(out, &run->rec[i], &rows[i]);
            else
                print_var_extra(out, o, &run->rec[i], &rows[i], seq_ms, size);
        }
        fflush(out);
    }
    free(rows);
}
