/* models_apart.c: a models run under a memory limit, measured in a process of its own
 * (models.h), and the floor below which no limit can hold a run at all. */
#include "carriers.h"
#include "models.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "confine.h"
#include "metrics.h"
#include "spawn_child.h"
#include "why.h"

#define START_MS 30000 /* for the process to say what it was granted */
#define GRACE_MS 2000  /* for a process that failed to exit of itself */

/* The rank's CPUs as the process's --cpu-ids. */
static void cpu_ids(const ld_cpus *cpus, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < cpus->n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%d", i ? "," : "", cpus->id[i]);
}

/* The process's command line, from the job's options and the run's settings. */
static void run_argv(const ld_job_config *cfg, const ld_strategy *s, char *exe,
                     char (*v)[64], char *ids, char **argv)
{
    const ld_models_config *mc = cfg->opts;
    unsigned cpus;
    uint64_t mem;
    ld_job_profile_asked(&mc->profile, &cpus, &mem);
    int k = 0, a = 0;
#define ARG(name, ...)                                                                   \
    (argv[k++] = name, snprintf(v[a], sizeof v[a], __VA_ARGS__), argv[k++] = v[a++])
    argv[k++] = exe;
    ARG("--strategy", "%s", s->name);
    ARG("--tasks", "%" PRIu64, mc->tasks);
    ARG("--delay-ms", "%.17g", mc->delay_ms);
    ARG("--thread-cap", "%" PRIu64, mc->thread_cap);
    ARG("--carriers", "%u", cfg->carriers);
    ARG("--workers", "%u", cfg->workers);
    ARG("--stack-size", "%zu", cfg->stack_size);
    ARG("--stack-mode", "%s", cfg->stack_mode == LD_STACK_COPY ? "copy" : "own");
    ARG("--trace-ns", "%" PRId64, cfg->trace_pinning_ns);
    ARG("--cpus", "%u", cpus);
    ARG("--mem-limit", "%" PRIu64, mem);
#undef ARG
    if (cfg->cold_stacks)
        argv[k++] = "--cold-stacks";
    argv[k++] = "--cpu-ids";
    argv[k++] = ids;
    argv[k] = NULL;
}

/* The ready line's grants as the profile's figures. */
static int ready_figures(const char *line, ld_figures *f)
{
    unsigned cpus, asked, clamped;
    uint64_t limit, mem_asked;
    if (sscanf(line, LD_MODELS_READY_LINE, &cpus, &asked, &limit, &mem_asked, &clamped) !=
        5)
        return -EPROTO;
    ld_job_profile_figures(f, cpus, asked, limit, mem_asked, clamped);
    return 0;
}

/* The figures a strategy adds: the capped strategies' two, or none. */
static size_t strategy_figures(const ld_job_config *cfg, const ld_strategy *s)
{
    return ld_models_capped_threads(cfg->opts, s) ? LD_LEN(ld_models_capped_figures) : 0;
}

/* "name:value,..." of the done line, each one of the strategy's figures in order. */
static int parse_figures(const char *at, size_t n, ld_figures *f)
{
    for (size_t k = 0; k < n; k++) {
        const char *name = ld_models_capped_figures[k];
        size_t len = strlen(name);
        char *end;
        if (strncmp(at, name, len) != 0 || at[len] != ':')
            return -EPROTO;
        ld_figure_add(f, name, strtod(at + len + 1, &end), "ms");
        at = end + (*end == ',');
    }
    return *at == ' ' ? 0 : -EPROTO;
}

/* The done line: rc, the metrics, the group's peak, the figures, and why. */
static int parse_done(const char *line, size_t nfig, ld_metrics *m, uint64_t *peak,
                      ld_figures *f, int *run_rc)
{
    int used = 0;
    if (sscanf(line, LD_MODELS_DONE_LINE "%n", run_rc, &used) != 1 || used == 0)
        return -EPROTO;
    const char *at = line + used;
    int64_t *field = (int64_t *)(void *)m;
    for (size_t k = 0; k < LD_METRICS_N; k++) {
        char *end;
        field[k] = strtoll(at, &end, 10);
        if (end == at || *end != (k + 1 < LD_METRICS_N ? ',' : ' '))
            return -EPROTO;
        at = end + 1;
    }
    if (sscanf(at, "peak=%" SCNu64 " figures=%n", peak, &used) != 1)
        return -EPROTO;
    const char *why = strstr(at, " why=");
    if (*run_rc != 0 && why && why[5])
        ld_why_say("%s", why + 5);
    return *run_rc != 0 ? 0 : parse_figures(at + used, nfig, f);
}

/* A process that ended without leaving its group (killed, or failed): the group's
 * peak and counters read and the group removed. Returns whether the OOM killer ended
 * it, which is a finding of the run; its metrics are then what the rank saw: the time
 * until the end, and the group's peak as its resident memory; nothing else was
 * measured. */
static int reap(pid_t pid, int status, int64_t ready_ns, ld_metrics *m, uint64_t *peak)
{
    ld_confine_events ev = {0};
    if (ld_confine_reap((long)pid, &ev, peak) != 0 || !WIFSIGNALED(status) ||
        WTERMSIG(status) != SIGKILL || ev.oom_kills == 0)
        return 0;
    *m = (ld_metrics){.wall_ns = ld_now_ns() - ready_ns,
                      .peak_rss_kib = (int64_t)(*peak / 1024)};
    return 1;
}

/* The figures after the grants: the strategy's (none measured when it was killed),
 * then the group's peak, then whether it was killed. */
static void end_figures(ld_figures *f, size_t nfig, int was_killed, uint64_t peak)
{
    for (size_t k = 0; was_killed && k < nfig; k++)
        ld_figure_add(f, ld_models_capped_figures[k], 0, "ms");
    ld_job_profile_peak(f, peak);
    ld_figure_add(f, "killed", was_killed, "1: OOM-killed");
}

/* Start the process and read its two lines; the figures of a run killed at its limit
 * are said as figures, a run that failed otherwise is the run's error. */
static int run_apart(const ld_job_config *cfg, const ld_strategy *s, ld_metrics *m,
                     ld_figures *f)
{
    char exe[4096], vals[16][64], ids[LD_CPUS_MAX * 6], *argv[40], line[2048];
    ld_child c;
    int status = 0, run_rc = 0,
        rc = ld_sibling_path("loomdist-models-run", exe, sizeof exe);
    size_t nfig = strategy_figures(cfg, s);
    uint64_t peak = 0;
    cpu_ids(cfg->cpus, ids, sizeof ids);
    run_argv(cfg, s, exe, vals, ids, argv);
    if (rc == 0)
        rc = ld_child_spawn(&c, argv, 0);
    if (rc != 0)
        return rc;
    rc = ld_child_read_line(&c, line, sizeof line, START_MS);
    if (rc >= 0)
        rc = ready_figures(line, f);
    int64_t ready_ns = ld_now_ns();
    int done = rc == 0 && ld_child_read_line(&c, line, sizeof line, INT_MAX) >= 0;
    if (done)
        rc = parse_done(line, nfig, m, &peak, f, &run_rc);
    pid_t pid = c.pid;
    int waited = ld_child_wait(&c, done ? START_MS : GRACE_MS, &status);
    if (rc == 0 && done && waited == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        end_figures(f, nfig, 0, peak);
        return run_rc;
    }
    int was_killed = reap(pid, waited == 0 ? status : 0, ready_ns, m, &peak);
    if (rc == 0 && !done && was_killed) {
        end_figures(f, nfig, 1, peak);
        return 0;
    }
    ld_why_say("models: the run's process failed (%s)",
               rc < 0 ? strerror(-rc) : "it ended without measuring");
    return rc < 0 ? rc : -EIO;
}

int ld_models_measure_apart(const ld_job_config *cfg, const ld_strategy *s, ld_metrics *m,
                            ld_figures *figures)
{
    const ld_models_config *mc = cfg->opts;
    unsigned cpus;
    uint64_t mem;
    ld_job_profile_asked(&mc->profile, &cpus, &mem);
    if (mem == 0)
        return LD_JOB_MEASURE_HERE;
    ld_figures none = {.n = 0};
    *m = (ld_metrics){0};
    return run_apart(cfg, s, m, figures ? figures : &none);
}
