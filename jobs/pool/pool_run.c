/* pool_run.c: the pool job's runs: the backend for the job, then per run the server
 * under test in a process of its own, driven through a warm-up and a measurement by a
 * load generator, its counts turned into figures (pool.h). */
#include "pool.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "confine.h"
#include "gt.h"
#include "pool_load.h"
#include "pool_server.h"
#include "pool_stats.h"
#include "spawn_child.h"

#define MIB (1024.0 * 1024.0)
#define START_MS 30000 /* for a child to say it is ready, or to exit */
#define GRACE_MS 2000  /* for a child that failed to exit of itself */

/* What the job starts once: the backend every run calls. */
typedef struct pool_prepared {
    ld_child backend;
    int port;
} pool_prepared;

/* Children inherit the limit: raise the soft one to the hard one, as wrk wants too. */
static void raise_descriptors(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* The port in the backend's first line, "...: listening on http://127.0.0.1:PORT". */
static int backend_port(ld_child *c)
{
    char line[256];
    int rc = ld_child_read_line(c, line, sizeof line, START_MS);
    const char *colon = rc >= 0 ? strrchr(line, ':') : NULL;
    return colon ? atoi(colon + 1) : rc < 0 ? rc : -EPROTO;
}

/* The backend, with room for every backend connection the server may open. */
static int backend_start(const ld_pool_config *pc, pool_prepared *pp)
{
    char exe[4096], conns[32];
    int rc = ld_sibling_path("loomdist-clearinghouse", exe, sizeof exe);
    if (rc != 0)
        return rc;
    snprintf(conns, sizeof conns, "%" PRIu64, pc->backend_conns + 64);
    char *argv[] = {exe,   "--listen", "127.0.0.1:0",   "--max-connections",
                    conns, "--quiet",  "--stop-on-eof", NULL};
    rc = ld_child_spawn(&pp->backend, argv, 1); /* it stops when this process ends */
    if (rc == 0 && (pp->port = backend_port(&pp->backend)) <= 0) {
        rc = pp->port < 0 ? pp->port : -EPROTO;
        ld_child_wait(&pp->backend, 0, NULL);
    }
    return rc;
}

int ld_pool_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                    void **prepared, int64_t *bound_ns)
{
    (void)trades;
    (void)n;
    *bound_ns = 0;
    raise_descriptors();
    pool_prepared *pp = calloc(1, sizeof *pp);
    if (!pp)
        return -ENOMEM;
    int rc = backend_start(cfg->opts, pp);
    if (rc != 0) {
        fprintf(stderr,
                "loomdist: pool: cannot start the backend, loomdist-clearinghouse "
                "beside loomdist: %s\n",
                strerror(-rc));
        free(pp);
        return rc;
    }
    *prepared = pp;
    return 0;
}

void ld_pool_release(void *prepared)
{
    pool_prepared *pp = prepared;
    if (!pp)
        return;
    ld_child_wait(&pp->backend, START_MS, NULL); /* its stdin ends: it stops */
    free(pp);
}

/* --- One run ----------------------------------------------------------------------- */

static const char *const mode_names[] = {"fresh", "pooled", "pooled-trim"};

/* What the server said it was granted, in its "ready" line. */
typedef struct ready {
    int port, cgroup;
    unsigned carriers, cpus, cpus_asked, clamped;
    uint64_t mem_limit, mem_asked;
} ready;

static int parse_ready(const char *line, ready *r)
{
    int n = sscanf(line,
                   "ready port=%d carriers=%u cpus=%u cpus_asked=%u mem_limit=%" SCNu64
                   " mem_asked=%" SCNu64 " clamped=%u cgroup=%d",
                   &r->port, &r->carriers, &r->cpus, &r->cpus_asked, &r->mem_limit,
                   &r->mem_asked, &r->clamped, &r->cgroup);
    return n == 8 ? 0 : -EPROTO;
}

/* The server's command line, from the job's options and the run's settings. */
static void server_argv(const ld_job_input *in, enum ld_pool_mode mode,
                        const pool_prepared *pp, char *exe, char (*v)[64], char **argv)
{
    const ld_pool_config *pc = in->cfg->opts;
    unsigned cpus;
    uint64_t mem;
    ld_job_profile_asked(&pc->profile, &cpus, &mem);
    int k = 0, a = 0;
#define ARG(name, ...)                                                                   \
    (argv[k++] = name, snprintf(v[a], sizeof v[a], __VA_ARGS__), argv[k++] = v[a++])
    argv[k++] = exe;
    ARG("--backend", "127.0.0.1:%d", pp->port);
    ARG("--think-ms", "%.17g", pc->think_ms);
    ARG("--mode", "%s", mode_names[mode]);
    ARG("--stack-mode", "%s", in->cfg->stack_mode == LD_STACK_COPY ? "copy" : "own");
    ARG("--stack-size", "%zu", in->cfg->stack_size);
    ARG("--carriers", "%u", in->cfg->carriers);
    ARG("--cpus", "%u", cpus);
    ARG("--mem-limit", "%" PRIu64, mem);
    ARG("--connections", "%" PRIu64, pc->connections);
    ARG("--backend-conns", "%" PRIu64, pc->backend_conns);
    ARG("--warmup-depth", "%" PRIu64, pc->warmup_depth);
    ARG("--trim-after", "%" PRIu64, pc->trim_after);
#undef ARG
    argv[k] = NULL;
}

/* One command to the server and its "stats" answer. */
static int server_ask(ld_child *srv, const char *cmd, ld_pool_stats *out)
{
    char line[2048];
    int rc = ld_child_write(srv, cmd);
    if (rc == 0)
        rc = ld_child_read_line(srv, line, sizeof line, START_MS);
    if (rc >= 0)
        rc = strncmp(line, "stats ", 6) == 0 ? ld_pool_stats_parse(line + 6, out)
                                             : -EPROTO;
    return rc < 0 ? rc : 0;
}

/* The generator the options ask for: auto is wrk where it is installed. */
static enum ld_load_tool load_tool(const ld_pool_config *pc)
{
    if (pc->load == LD_POOL_LOAD_BUILTIN)
        return LD_LOAD_BUILTIN;
    if (pc->load == LD_POOL_LOAD_WRK || ld_load_available(LD_LOAD_WRK))
        return LD_LOAD_WRK;
    return LD_LOAD_BUILTIN;
}

/* Everything one run measured. */
typedef struct outcome {
    ready granted;
    ld_pool_stats warm, steady;
    ld_load_result warm_load, load;
    int killed; /* the kernel's OOM killer ended the server in the run */
    enum ld_load_tool tool;
} outcome;

/* Warm-up, phase change, measurement, stats: each step needs the server alive. */
static int drive(const ld_job_input *in, ld_child *srv, outcome *o, char *err,
                 size_t errlen)
{
    const ld_pool_config *pc = in->cfg->opts;
    ld_load_spec spec = {.tool = o->tool,
                         .host = "127.0.0.1",
                         .port = o->granted.port,
                         .path = "/",
                         .connections = pc->connections,
                         .threads = (unsigned)pc->load_threads,
                         .seconds = pc->study_phases ? LD_POOL_STUDY_S : pc->warmup_s};
    int rc = spec.seconds > 0 ? ld_load_run(&spec, &o->warm_load, err, errlen) : 0;
    if (rc == 0)
        rc = server_ask(srv, "phase\n", &o->warm);
    spec.seconds = pc->study_phases ? LD_POOL_STUDY_S : pc->measure_s;
    if (rc == 0)
        rc = ld_load_run(&spec, &o->load, err, errlen);
    if (rc == 0)
        rc = server_ask(srv, "stats\n", &o->steady);
    if (rc == 0)
        rc = ld_child_write(srv, "quit\n");
    return rc;
}

/* A server that died: what its memory group saw, read before the group goes. Returns
 * whether the OOM killer ended it, which is a finding of the run, not its failure. */
static int server_killed(pid_t pid, int status, outcome *o)
{
    ld_confine_events ev = {0};
    uint64_t peak = 0;
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL ||
        ld_confine_reap((long)pid, &ev, &peak) != 0 || ev.oom_kills == 0)
        return 0;
    o->killed = 1;
    o->steady.cgroup_peak = peak;
    o->steady.limit_hits = ev.limit_hits;
    o->steady.oom = ev.oom;
    o->steady.oom_kills = ev.oom_kills;
    return 1;
}

/* Start the server, drive it, and stop it. */
static int run_server(const ld_job_input *in, enum ld_pool_mode mode, outcome *o)
{
    const pool_prepared *pp = in->prepared;
    char exe[4096], vals[16][64], *argv[40], line[512], err[256] = "";
    ld_child srv;
    int status = 0, rc = ld_sibling_path("loomdist-pool-server", exe, sizeof exe);
    o->tool = load_tool(in->cfg->opts);
    server_argv(in, mode, pp, exe, vals, argv);
    if (rc == 0)
        rc = ld_child_spawn(&srv, argv, 1);
    if (rc != 0)
        return rc;
    rc = ld_child_read_line(&srv, line, sizeof line, START_MS);
    if (rc >= 0)
        rc = parse_ready(line, &o->granted);
    if (rc == 0)
        rc = drive(in, &srv, o, err, sizeof err);
    pid_t pid = srv.pid;
    int waited = ld_child_wait(&srv, rc == 0 ? START_MS : GRACE_MS, &status);
    if (rc == 0 && waited == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (waited == 0 && server_killed(pid, status, o))
        return 0;
    fprintf(stderr, "loomdist: pool: the server under test failed (%s%s%s)\n",
            rc < 0 ? strerror(-rc) : "exit status", *err ? ": " : "", err);
    return rc < 0 ? rc : -EIO;
}

/* One phase as the generator and the server saw it. */
typedef struct phase {
    const ld_load_result *load;
    const ld_pool_stats *server;
} phase;

static double per_second(uint64_t n, double seconds)
{
    return seconds > 0 ? (double)n / seconds : 0;
}

/* A figure each phase reports, under one name for the measurement and another for
 * the warm-up (names are literals, the same on every rank). */
typedef struct phase_figure {
    const char *name, *warmup_name, *unit;
    double (*value)(const phase *p);
} phase_figure;

#define LOAD(f, expr)                                                                    \
    static double f(const phase *p)                                                      \
    {                                                                                    \
        const ld_load_result *l = p->load;                                               \
        return (expr);                                                                   \
    }
#define SERVER(f, expr)                                                                  \
    static double f(const phase *p)                                                      \
    {                                                                                    \
        const ld_pool_stats *s = p->server;                                              \
        return (expr);                                                                   \
    }
LOAD(rps, per_second(l->requests, l->seconds))
LOAD(requests, (double)l->requests)
LOAD(errors, (double)(l->errors + p->server->errors))
LOAD(p50, l->p50_ns / 1e6)
LOAD(p99, l->p99_ns / 1e6)
LOAD(max, l->max_ns / 1e6)
SERVER(server_rps, per_second(s->requests, s->seconds))
SERVER(server_requests, (double)s->requests)
SERVER(server_p50, s->latency_p50_ns / 1e6)
SERVER(server_p99, s->latency_p99_ns / 1e6)
SERVER(server_max, s->latency_max_ns / 1e6)
SERVER(rss_peak, (double)s->rss_peak / MIB)
SERVER(stack_alloc, (double)s->stack_allocated / MIB)
SERVER(stack_resident, (double)s->stack_resident / MIB)
SERVER(chunk_allocs, (double)s->chunk_allocs)
SERVER(chunk_reuses, (double)s->chunk_reuses)
SERVER(chunk_grows, (double)s->chunk_grows)
SERVER(chunk_trims, (double)s->chunk_trims)
SERVER(capacity_mean, (double)s->capacity_mean)
SERVER(capacity_p99, (double)s->capacity_p99)
SERVER(frozen_mean, (double)s->frozen_mean)
SERVER(frozen_p99, (double)s->frozen_p99)
SERVER(minor_faults, (double)s->minor_faults)
SERVER(major_faults, (double)s->major_faults)
#undef LOAD
#undef SERVER

static const phase_figure phase_figures[] = {
    {"rps", "warmup_rps", "req/s", rps},
    {"server_rps", "warmup_server_rps", "req/s", server_rps},
    {"requests", "warmup_requests", "requests", requests},
    {"server_requests", "warmup_server_requests", "requests", server_requests},
    {"errors", "warmup_errors", "requests", errors},
    {"p50_ms", "warmup_p50_ms", "ms", p50},
    {"p99_ms", "warmup_p99_ms", "ms", p99},
    {"max_ms", "warmup_max_ms", "ms", max},
    {"server_p50_ms", "warmup_server_p50_ms", "ms", server_p50},
    {"server_p99_ms", "warmup_server_p99_ms", "ms", server_p99},
    {"server_max_ms", "warmup_server_max_ms", "ms", server_max},
    {"rss_peak_mib", "warmup_rss_peak_mib", "MiB", rss_peak},
    {"stack_alloc_mib", "warmup_stack_alloc_mib", "MiB", stack_alloc},
    {"stack_resident_mib", "warmup_stack_resident_mib", "MiB", stack_resident},
    {"chunk_allocs", "warmup_chunk_allocs", "", chunk_allocs},
    {"chunk_reuses", "warmup_chunk_reuses", "", chunk_reuses},
    {"chunk_grows", "warmup_chunk_grows", "", chunk_grows},
    {"chunk_trims", "warmup_chunk_trims", "", chunk_trims},
    {"capacity_mean", "warmup_capacity_mean", "B", capacity_mean},
    {"capacity_p99", "warmup_capacity_p99", "B", capacity_p99},
    {"frozen_mean", "warmup_frozen_mean", "B", frozen_mean},
    {"frozen_p99", "warmup_frozen_p99", "B", frozen_p99},
    {"minor_faults", "warmup_minor_faults", "", minor_faults},
    {"major_faults", "warmup_major_faults", "", major_faults},
};

/* The figures of one run, the same names in the same order on every rank: each phase's,
 * then the run's memory group and what the server was granted. */
static void add_figures(const ld_job_input *in, const outcome *o)
{
    const ld_pool_config *pc = in->cfg->opts;
    const phase steady = {&o->load, &o->steady}, warm = {&o->warm_load, &o->warm};
    const ld_pool_stats *s = &o->steady;
    ld_figures *f = in->figures;
    for (size_t k = 0; k < LD_LEN(phase_figures); k++)
        ld_figure_add(f, phase_figures[k].name, phase_figures[k].value(&steady),
                      phase_figures[k].unit);
    for (size_t k = 0; k < LD_LEN(phase_figures); k++)
        ld_figure_add(f, phase_figures[k].warmup_name, phase_figures[k].value(&warm),
                      phase_figures[k].unit);
    ld_figure_add(f, "rps_limit",
                  pc->think_ms > 0 ? pc->connections * 1e3 / pc->think_ms : 0, "req/s");
    ld_figure_add(f, "cgroup_peak_mib", (double)s->cgroup_peak / MIB, "MiB");
    ld_figure_add(f, "limit_hits", (double)s->limit_hits, "");
    ld_figure_add(f, "oom", (double)s->oom, "");
    ld_figure_add(f, "oom_kills", (double)s->oom_kills, "");
    ld_figure_add(f, "killed", o->killed, "1: OOM-killed");
    ld_figure_add(f, "cpus", o->granted.cpus, "CPUs");
    ld_figure_add(f, "cpus_asked",
                  o->granted.cpus_asked ? o->granted.cpus_asked : o->granted.cpus,
                  "CPUs");
    ld_figure_add(f, "mem_limit_mib", (double)o->granted.mem_limit / MIB, "MiB");
    ld_figure_add(f, "mem_asked_mib", (double)o->granted.mem_asked / MIB, "MiB");
    ld_figure_add(f, "clamped", o->granted.clamped, "1 cpus, 2 memory");
    ld_figure_add(f, "load_wrk", o->tool == LD_LOAD_WRK, "1: wrk, 0: loomdist-load");
}

static int pool_run(const ld_job_input *in, enum ld_pool_mode mode)
{
    outcome o;
    memset(&o, 0, sizeof o);
    int rc = run_server(in, mode, &o);
    if (rc == 0)
        add_figures(in, &o);
    return rc;
}

int ld_pool_fresh(const ld_job_input *in)
{
    return pool_run(in, LD_POOL_FRESH);
}

int ld_pool_pooled(const ld_job_input *in)
{
    return pool_run(in, LD_POOL_POOLED);
}

int ld_pool_pooled_trim(const ld_job_input *in)
{
    return pool_run(in, LD_POOL_POOLED_TRIM);
}
