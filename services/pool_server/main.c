/* loomdist-pool-server: the pooling study's server under test as a process of its own,
 * so that a memory limit bounds it alone and an OOM kill ends it, not the rank.
 *
 * The rank that starts it (jobs/pool/pool_run.c) speaks to it by lines: it prints
 * "ready port=P ..." once it listens, then answers "phase" (the warm-up is over) and
 * "stats" each with one "stats KEY=VALUE ..." line (pool_stats.h) and stops at "quit"
 * or at the end of its input.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uv.h>

#include "carriers.h"
#include "cli.h"
#include "cpus.h"
#include "pool_server.h"
#include "confine.h"

#define NAME "loomdist-pool-server"

static const char usage[] =
    "Usage: " NAME " --backend HOST:PORT [options]\n\n"
    "The pooling study's server under test: every request runs on a green thread that\n"
    "makes a blocking GET of the backend's /think, then answers. Started and driven by\n"
    "loomdist --jobs pool, over its standard input and output.\n\n"
    "  --listen HOST:PORT     IPv4 address to serve on (default 127.0.0.1:0, a free "
    "port)\n"
    "  --backend HOST:PORT    the backend, a loomdist-clearinghouse (required)\n"
    "  --think-ms MS          the backend's think time per call (default 30)\n"
    "  --mode M               fresh, pooled or pooled-trim (default fresh)\n"
    "  --stack-mode M         copy or own (default copy)\n"
    "  --stack-size BYTES     green threads' stacks (default 65536)\n"
    "  --carriers N           carrier threads (default: one per CPU granted)\n"
    "  --cpus N               CPUs, an affinity mask (default: all)\n"
    "  --mem-limit BYTES      a memory cgroup's limit (default: none)\n"
    "  --connections N        clients expected, and pooled threads (default 10000)\n"
    "  --backend-conns N      backend calls in flight at once (default 4096)\n"
    "  --warmup-depth N       frames of the warm-up's call path (default 4)\n"
    "  --trim-after K         pooled-trim: the trim policy's K (default 8)\n"
    "  --help                 this text\n"
    "  --version              the version and git commit\n";

/* HOST:PORT, an IPv4 address, into the sockaddr_in at where. */
static void take_addr(const char *name, const char *arg, void *where)
{
    char host[64];
    const char *colon = strrchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : 0;
    if (!colon || len == 0 || len >= sizeof host)
        ld_cli_bad("%s takes HOST:PORT, not '%s'", name, arg);
    memcpy(host, arg, len);
    host[len] = '\0';
    int port = (int)ld_cli_count("the port", colon + 1, 0, 65535);
    if (uv_ip4_addr(host, port, where) != 0)
        ld_cli_bad("%s takes an IPv4 address, not '%s'", name, host);
}

typedef struct args {
    ld_pool_server_config cfg;
    unsigned cpus;
    uint64_t mem_limit, stack_size;
    int have_backend;
} args;

/* --backend's address, which every run needs, into the args at where. */
static void take_backend(const char *name, const char *arg, void *where)
{
    args *a = where;

    take_addr(name, arg, &a->cfg.backend);
    a->have_backend = 1;
}

static const ld_cli_choice modes[] = {{"fresh", LD_POOL_FRESH},
                                      {"pooled", LD_POOL_POOLED},
                                      {"pooled-trim", LD_POOL_POOLED_TRIM},
                                      {NULL, 0}};
static const ld_cli_choice stack_modes[] = {
    {"copy", LD_STACK_COPY}, {"own", LD_STACK_OWN}, {NULL, 0}};

/* Every option into a; --help and --version exit 0, a bad one 2. */
static void parse_args(int argc, char **argv, args *a)
{
    ld_pool_server_config *c = &a->cfg;
    const ld_cli_opt opts[] = {
        LD_CLI_OPT_CALL("listen", &c->listen, take_addr),
        LD_CLI_OPT_CALL("backend", a, take_backend),
        LD_CLI_OPT_MS("think-ms", &c->think_ms, 0, 60000),
        LD_CLI_OPT_CHOICE("mode", &c->mode, modes),
        LD_CLI_OPT_CHOICE("stack-mode", &c->carriers.stack_mode, stack_modes),
        LD_CLI_OPT_COUNT("stack-size", &a->stack_size, 0, 1u << 26),
        LD_CLI_OPT_COUNT("carriers", &c->carriers.carriers, 0, LD_CPUS_MAX),
        LD_CLI_OPT_COUNT("cpus", &a->cpus, 0, LD_CPUS_MAX),
        LD_CLI_OPT_COUNT("mem-limit", &a->mem_limit, 0, UINT64_C(1) << 50),
        LD_CLI_OPT_COUNT("connections", &c->connections, 0, 1000000),
        LD_CLI_OPT_COUNT("backend-conns", &c->backend_conns, 0, 1000000),
        LD_CLI_OPT_COUNT("warmup-depth", &c->warmup_depth, 0, 1000),
        LD_CLI_OPT_COUNT("trim-after", &c->trim_after, 0, 1000000),
        {.name = NULL},
    };
    const ld_cli_spec spec = {usage, opts, 0, LD_CLI_VERSION};

    ld_cli_parse(&spec, argc, argv);
    if (!a->have_backend)
        ld_cli_bad("--backend HOST:PORT is required");
    if (c->connections == 0 || c->backend_conns == 0)
        ld_cli_bad("--connections and --backend-conns take 1 or more");
}

/* Every client and every backend connection is a descriptor: the soft limit goes up to
 * the hard one, and past that the run is refused, naming the limit. */
static void check_descriptors(const ld_pool_server_config *cfg)
{
    struct rlimit rl;
    uint64_t need = cfg->connections + cfg->backend_conns + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_max != RLIM_INFINITY && need > rl.rlim_max)
        ld_cli_bad("%" PRIu64 " connections and %" PRIu64
                   " backend connections need %" PRIu64
                   " descriptors, past the open-file limit of %" PRIu64 " (ulimit -Hn)",
                   cfg->connections, cfg->backend_conns, need, (uint64_t)rl.rlim_max);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* A stats line: the server's counts, with its memory group's. */
static void print_stats(ld_pool_stats *st, const ld_confine *p)
{
    char line[2048];
    ld_confine_events ev;
    ld_confine_mem_events(p, &ev);
    st->cgroup_peak = ld_confine_mem_peak(p);
    st->limit_hits = ev.limit_hits;
    st->oom = ev.oom;
    st->oom_kills = ev.oom_kills;
    if (ld_pool_stats_format(st, line, sizeof line) < 0)
        line[0] = '\0';
    printf("stats %s\n", line);
    fflush(stdout);
}

/* The rank's commands until "quit" or the end of the input. */
static void serve_commands(ld_pool_server *srv, const ld_confine *p)
{
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        ld_pool_stats st;
        int phase = strncmp(line, "phase", 5) == 0;
        if (strncmp(line, "quit", 4) == 0)
            return;
        if (!phase && strncmp(line, "stats", 5) != 0) {
            fprintf(stderr, NAME ": unknown command %s", line);
            continue;
        }
        if ((phase ? ld_pool_server_phase(srv, &st) : ld_pool_server_stats(srv, &st)) ==
            0)
            print_stats(&st, p);
    }
}

int main(int argc, char **argv)
{
    args a = {.cfg = {.think_ms = 30,
                      .mode = LD_POOL_FRESH,
                      .connections = 10000,
                      .backend_conns = 4096,
                      .warmup_depth = 4,
                      .trim_after = 8,
                      .carriers = {.stack_mode = LD_STACK_COPY}},
              .stack_size = LD_GT_STACK_DEFAULT};
    uv_ip4_addr("127.0.0.1", 0, &a.cfg.listen);
    ld_cli_program = NAME;
    parse_args(argc, argv, &a);
    check_descriptors(&a.cfg);
    signal(SIGPIPE, SIG_IGN);

    ld_cpus offered;
    ld_confine p;
    int rc = ld_cpus_current(&offered);
    if (rc == 0)
        rc = ld_confine_enter(&p, &offered, a.cpus, a.mem_limit);
    if (rc != 0) {
        fprintf(stderr, NAME ": cannot take the CPUs asked for: %s\n", strerror(-rc));
        return 1;
    }
    a.cfg.carriers.cpus = &p.cpus;
    a.cfg.carriers.stack_size = (size_t)a.stack_size;
    ld_pool_server *srv;
    if ((rc = ld_pool_server_start(&srv, &a.cfg)) != 0) {
        fprintf(stderr, NAME ": cannot serve: %s\n", strerror(-rc));
        return 1;
    }
    printf("ready port=%d carriers=%u cpus=%u cpus_asked=%u mem_limit=%" PRIu64
           " mem_asked=%" PRIu64 " clamped=%u cgroup=%d\n",
           ld_pool_server_port(srv), ld_carriers_count(&a.cfg.carriers), p.cpus.n, a.cpus,
           p.mem_limit, a.mem_limit, p.clamped, p.cgroup_version);
    fflush(stdout);
    serve_commands(srv, &p);
    rc = ld_pool_server_stop(srv);
    ld_confine_leave(&p);
    if (rc != 0)
        fprintf(stderr, NAME ": a carrier failed: %s\n", strerror(-rc));
    return rc != 0;
}
