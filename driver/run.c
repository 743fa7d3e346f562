/* run.c: the main loop. It knows jobs only through their tables, so a new job or
 * strategy never changes it. */
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "peers.h"
#include "phases.h"
#include "resources.h"
#include "why.h"

static int selected(const ld_options *o, size_t j, size_t s)
{
    return (o->selected[j] >> s) & 1u;
}

/* Strategies of job j selected in o. */
static size_t job_selected(const ld_options *o, size_t j)
{
    size_t n = 0;
    for (size_t s = 0; s < ld_jobs[j]->nstrategies; s++)
        n += (size_t)selected(o, j, s);
    return n;
}

static size_t count_selected(const ld_options *o)
{
    size_t n = 0;
    for (size_t j = 0; j < ld_njobs; j++)
        n += job_selected(o, j);
    return n;
}

/* One percentile column of a record's results, as ld_pcts_of reads it. */
typedef struct column_at {
    const ld_column *c;
    const char *results;
    size_t size; /* of one result */
} column_at;

static int64_t column_value(const void *ctx, size_t i)
{
    const column_at *at = ctx;
    return ld_col_i64(at->c, at->results + i * at->size);
}

/* The rank's percentiles of one column in one iteration, read where the results lie:
 * a copy would be the process's peak at a million trades, its stacks still held. */
static void column_percentiles(const ld_column *c, const ld_record *r, size_t n,
                               int64_t *pct)
{
    column_at at = {c, r->results, r->job->result_size};
    ld_pcts_of(n, column_value, &at, pct);
}

/* Everything a measured iteration leaves: its metrics, figures and percentiles. */
static void keep_iteration(ld_record *r, unsigned at, const ld_metrics *m,
                           const ld_figures *figs, size_t n)
{
    r->metrics[at] = *m;
    r->figures[at] = *figs;
    for (size_t k = 0; k < r->npct; k++)
        column_percentiles(ld_job_column(r->job, LD_COL_PERCENTILES, k), r, n,
                           ld_record_pct(r, at, k));
}

/* Rank 0 tells the user what is running: long runs must not look hung. */
static void progress(MPI_Comm comm, const ld_options *o, const ld_record *r, unsigned it,
                     unsigned warmup, int64_t wall_ns)
{
    int64_t makespan;
    MPI_Reduce(&wall_ns, &makespan, 1, MPI_INT64_T, MPI_MAX, 0, comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && !o->quiet)
        fprintf(stderr, "loomdist: %s/%s %s %u/%u: %.1f ms\n", r->job->name,
                r->strategy->name, it < warmup ? "warm-up" : "iteration",
                it < warmup ? it + 1 : it - warmup + 1,
                it < warmup ? warmup : (unsigned)o->iterations, (double)makespan / 1e6);
}

/* This rank's reason for a failed run (rc < 0) into why: what the job said (why.h),
 * else the limit the kernel hit when it refused memory (the mapping count, or memory
 * itself), else the errno's text. Returns 2 for the job's own words, 1 for the
 * driver's, 0 when the run did not fail. */
static int rank_reason(int rc, char *why, size_t len)
{
    why[0] = '\0';
    if (rc == 0)
        return 0;
    if (ld_why_get(why, len) > 0)
        return 2;
    if (rc != -ENOMEM) {
        snprintf(why, len, "%s", strerror(-rc));
        return 1;
    }
    long maps = ld_proc_maps(), max = ld_resources_max_map_count();
    if (max > 0 && maps >= max - 64)
        snprintf(why, len,
                 "the kernel refused a memory mapping: %ld mappings are in use and "
                 "vm.max_map_count is %ld",
                 maps, max);
    else
        snprintf(why, len,
                 "out of memory (mmap or malloc refused; see MemAvailable, ulimit -v "
                 "and the cgroup's memory.max)");
    return 1;
}

/* One line for a failed step (`what`: "JOB/STRATEGY failed", "JOB could not
 * prepare"), from rank 0: how many ranks failed, and one reason, that of the lowest
 * rank whose job said why, else of the lowest rank that failed. Each rank ranks itself
 * by a key (least wins; a rank that did not fail comes last), so that two reductions
 * and one broadcast from the chosen rank carry it, with no buffer that grows with the
 * ranks. Every rank calls it once the ranks agree the step failed, so none waits for
 * another. */
static void say_failure(MPI_Comm comm, const char *what, int rc)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char why[LD_WHY_MAX];
    int said = rank_reason(rc, why, sizeof why);
    int failed = said != 0, key = said == 2 ? rank : said == 1 ? size + rank : 2 * size;
    MPI_Allreduce(MPI_IN_PLACE, &key, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, comm);
    int chosen = key % size;
    MPI_Bcast(why, sizeof why, MPI_CHAR, chosen, comm);
    why[sizeof why - 1] = '\0';
    if (rank == 0)
        fprintf(stderr, "loomdist: %s on %d of %d rank%s (rank %d: %s)\n", what, failed,
                size, size == 1 ? "" : "s", chosen, why);
}

/* say_failure for one strategy: "JOB/STRATEGY <step>". */
static void say_step_failure(MPI_Comm comm, const ld_record *r, const char *step, int rc)
{
    char what[128];
    snprintf(what, sizeof what, "%s/%s %s", r->job->name, r->strategy->name, step);
    say_failure(comm, what, rc);
}

/* Rank 0's first measured iteration's figure names, on every rank: into names[0..n),
 * which point into text. Names past LD_FIGURE_NAME_MAX are cut here, and refused by
 * ld_figures_order on rank 0. */
static size_t first_names(MPI_Comm comm, const ld_record *r, char *text,
                          const char **names)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    unsigned n = rank == 0 ? (unsigned)r->figures[0].n : 0;
    for (size_t k = 0, at = 0; rank == 0 && k < n; k++) {
        snprintf(text + at, LD_FIGURE_NAME_MAX, "%s", r->figures[0].v[k].name);
        at += strlen(text + at) + 1;
    }
    MPI_Bcast(&n, 1, MPI_UNSIGNED, 0, comm);
    MPI_Bcast(text, LD_FIGURES_MAX * LD_FIGURE_NAME_MAX, MPI_CHAR, 0, comm);
    for (size_t k = 0, at = 0; k < n; k++) {
        names[k] = text + at;
        at += strlen(text + at) + 1;
    }
    return n;
}

/* Every measured iteration's figures, on every rank, put in the order of rank 0's
 * first by name, as the table and the file take them by position: a figure that one
 * iteration or rank lacks, repeats or adds fails the strategy, with one line of why,
 * rather than be added to another. Returns 0, or -1 on every rank. */
static int order_figures(MPI_Comm comm, ld_record *r)
{
    char text[LD_FIGURES_MAX * LD_FIGURE_NAME_MAX] = {0};
    const char *names[LD_FIGURES_MAX];
    size_t n = first_names(comm, r, text, names);
    char why[LD_WHY_MAX];
    int rc = 0;
    ld_why_clear();
    for (unsigned it = 0; rc == 0 && it < r->iterations; it++) {
        rc = ld_figures_order(&r->figures[it], names, n, why, sizeof why);
        if (rc != 0)
            ld_why_say("measured iteration %u: %s", it + 1, why);
    }
    int ok = rc == 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (!ok)
        say_step_failure(comm, r, "reported figures unlike rank 0's first iteration", rc);
    return ok ? 0 : -1;
}

/* Warm-up and measured iterations of one strategy, all ranks in step. */
static int run_strategy(MPI_Comm comm, const ld_options *o, const ld_job_config *cfg,
                        const ld_share *share, const void *prepared, unsigned warmup,
                        ld_record *r)
{
    unsigned its = (unsigned)o->iterations, total = warmup + its;
    while (ld_job_column(r->job, LD_COL_PERCENTILES, r->npct))
        r->npct++;
    r->metrics = calloc(its, sizeof *r->metrics);
    r->pct = calloc(its * (r->npct ? r->npct : 1), sizeof *r->pct);
    r->figures = calloc(its, sizeof *r->figures);
    r->results =
        calloc(share->n ? share->n : 1, r->job->result_size ? r->job->result_size : 1);
    int ok = r->metrics && r->pct && r->figures && r->results;
    for (unsigned it = 0; ok && it < total; it++) {
        ld_metrics m;
        ld_figures figs;
        MPI_Barrier(comm);
        int rc = ld_job_measure(r->job, r->strategy, cfg, share->trades, share->n,
                                prepared, r->results, &m, &figs);
        ok = rc == 0;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
        if (!ok) {
            say_step_failure(comm, r, "failed", rc);
            break;
        }
        progress(comm, o, r, it, warmup, m.wall_ns);
        if (it >= warmup)
            keep_iteration(r, it - warmup, &m, &figs, share->n);
    }
    r->iterations = its;
    return ok ? order_figures(comm, r) : -1;
}

/* One strategy with what it keeps across its iterations (ld_job_strategy_open: its
 * stacks and carriers), which goes with it, so no later strategy's memory column
 * carries its stacks. */
static int run_kept(MPI_Comm comm, const ld_options *o, const ld_job_config *job_cfg,
                    const ld_share *share, const void *prepared, unsigned warmup,
                    ld_record *r)
{
    ld_job_config cfg = *job_cfg;
    ld_why_clear();
    int rc = ld_job_strategy_open(&cfg);
    int ok = rc == 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (!ok)
        say_step_failure(comm, r, "could not start", rc);
    else
        ok = run_strategy(comm, o, &cfg, share, prepared, warmup, r) == 0;
    ld_job_strategy_close(&cfg);
    return ok ? 0 : -1;
}

/* The warm-up a strategy gets: --warmup, or, when that is 0, one iteration for the
 * first strategy of a job with a baseline when it runs beside others, so that the
 * speedups over the baseline do not carry the first run's cold caches and page
 * faults. A strategy that runs alone has no speedup to protect: it runs once, and its
 * whole process can be timed against another program's. */
static unsigned warmup_of(const ld_options *o, size_t j, int first)
{
    const ld_job *job = ld_jobs[j];
    if (o->warmup > 0 || !first || !ld_job_reports(job, LD_REPORT_SPEEDUP) ||
        job_selected(o, j) < 2)
        return (unsigned)o->warmup;
    return 1;
}

/* What the job's share set up on rank 0, in cfg->shared on every rank; the share sees
 * every node's addresses in cfg->peers, whom a service it starts may let in. Returns 0,
 * or -1 on every rank once rank 0 has said why. */
static int share_job(MPI_Comm comm, const ld_job *job, const ld_node *node,
                     ld_job_config *cfg, char *blob, void **state)
{
    int rank, rc = 0;
    MPI_Comm_rank(comm, &rank);
    blob[0] = '\0';
    char host[256] = "127.0.0.1";
    /* The other ranks reach rank 0 by the machine's own host name, which resolves
     * where a node name (an emulated node's, say) may not. */
    if (node->nodes > 1 && gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "%s", node->name);
    host[sizeof host - 1] = '\0';
    char *peers = ld_peers_gather(comm);
    cfg->peers = peers;
    if (rank == 0)
        rc = job->share(cfg, host, blob, LD_JOB_SHARED_MAX, state);
    cfg->peers = NULL;
    free(peers);
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    MPI_Bcast(blob, LD_JOB_SHARED_MAX, MPI_CHAR, 0, comm);
    blob[LD_JOB_SHARED_MAX - 1] = '\0';
    if (rc != 0 && rank == 0)
        fprintf(stderr, "loomdist: %s: %s\n", job->name, blob[0] ? blob : strerror(-rc));
    cfg->shared = blob;
    return rc == 0 ? 0 : -1;
}

/* The job's untimed set-up on every rank, and one line from rank 0 when it failed on
 * any: 1 when it did not. */
static int prepare_job(MPI_Comm comm, const ld_job *job, const ld_job_config *cfg,
                       const ld_share *share, void **prepared, int64_t *bound)
{
    ld_why_clear(); /* a reason said now is the set-up's */
    int rc =
        job->prepare ? job->prepare(cfg, share->trades, share->n, prepared, bound) : 0;
    int ok = rc == 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (!ok) {
        char what[128];
        snprintf(what, sizeof what, "%s could not prepare", job->name);
        say_failure(comm, what, rc);
    }
    return ok;
}

/* One job: share and prepare once, then each selected strategy in table order, then
 * release and unshare. */
static int run_job(MPI_Comm comm, const ld_options *o, const ld_node *node,
                   const ld_share *share, size_t j, ld_run *run)
{
    int64_t t0 = ld_phases_now();
    const ld_job *job = ld_jobs[j];
    ld_job_config cfg;
    ld_options_job_config(o, j, &node->cpus, &cfg);
    MPI_Comm_size(comm, &cfg.ranks);
    char blob[LD_JOB_SHARED_MAX];
    void *prepared = NULL, *state = NULL;
    int64_t bound = 0;
    int shared = !job->share || share_job(comm, job, node, &cfg, blob, &state) == 0;
    int ok = shared && prepare_job(comm, job, &cfg, share, &prepared, &bound);
    MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_INT64_T, MPI_MAX, comm);
    run->prepare_ns += ld_phases_now() - t0;
    size_t first = run->n;
    for (size_t s = 0; ok && s < job->nstrategies; s++) {
        if (!selected(o, j, s))
            continue;
        ld_record *r = &run->rec[run->n++];
        *r = (ld_record){.job = job, .strategy = &job->strategies[s], .bound_ns = bound};
        r->threads = ld_job_threads(job, &cfg, r->strategy);
        ok = run_kept(comm, o, &cfg, share, prepared,
                      warmup_of(o, j, run->n - 1 == first), r) == 0;
    }
    if (prepared)
        (job->release ? job->release : free)(prepared);
    if (shared && state && job->unshare)
        job->unshare(state);
    return ok ? 0 : -1;
}

int ld_run_all(MPI_Comm comm, const ld_options *o, const ld_node *node,
               const ld_share *share, ld_run *run)
{
    run->n = 0;
    run->rec = calloc(count_selected(o) + 1, sizeof *run->rec);
    if (!run->rec)
        return -1;
    run->prepare_ns = 0;
    for (size_t j = 0; j < ld_njobs; j++)
        if (o->selected[j] && run_job(comm, o, node, share, j, run) != 0)
            return -1;
    return 0;
}

void ld_run_free(ld_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        free(run->rec[i].metrics);
        free(run->rec[i].pct);
        free(run->rec[i].figures);
        free(run->rec[i].results);
    }
    free(run->rec);
    run->rec = NULL;
    run->n = 0;
}
