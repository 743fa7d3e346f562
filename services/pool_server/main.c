/* loomdist-pool-server: the pooling study's server under test as a process of its own,
 * so that a memory limit bounds it alone and an OOM kill ends it, not the rank.
 *
 * The rank that starts it (jobs/pool/pool_run.c) speaks to it by lines: it prints
 * "ready port=P ..." once it listens, then answers "phase" (the warm-up is over) and
 * "stats" each with one "stats KEY=VALUE ..." line (pool_stats.h) and stops at "quit"
 * or at the end of its input.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
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

static void parse_addr(const char *name, const char *arg, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = strrchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : 0;
    if (!colon || len == 0 || len >= sizeof host)
        ld_cli_bad("--%s takes HOST:PORT, not '%s'", name, arg);
    memcpy(host, arg, len);
    host[len] = '\0';
    int port = (int)ld_cli_count("the port", colon + 1, 0, 65535);
    if (uv_ip4_addr(host, port, out) != 0)
        ld_cli_bad("--%s takes an IPv4 address, not '%s'", name, host);
}

typedef struct args {
    ld_pool_server_config cfg;
    unsigned cpus;
    uint64_t mem_limit, stack_size;
    int have_backend;
} args;

static void parse_args(int argc, char **argv, args *a)
{
    static const struct option opts[] = {
        {"listen", 1, 0, 'l'},        {"backend", 1, 0, 'b'},
        {"think-ms", 1, 0, 't'},      {"mode", 1, 0, 'm'},
        {"stack-mode", 1, 0, 's'},    {"stack-size", 1, 0, 'S'},
        {"carriers", 1, 0, 'c'},      {"cpus", 1, 0, 'C'},
        {"mem-limit", 1, 0, 'M'},     {"connections", 1, 0, 'n'},
        {"backend-conns", 1, 0, 'B'}, {"warmup-depth", 1, 0, 'd'},
        {"trim-after", 1, 0, 'k'},    {"help", 0, 0, 'h'},
        {"version", 0, 0, 'V'},       {0, 0, 0, 0},
    };
    for (int o; (o = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        char *end;
        switch (o) {
        case 'l':
            parse_addr("listen", optarg, &a->cfg.listen);
            break;
        case 'b':
            parse_addr("backend", optarg, &a->cfg.backend), a->have_backend = 1;
            break;
        case 't':
            a->cfg.think_ms = strtod(optarg, &end);
            if (end == optarg || *end ||
                !(a->cfg.think_ms >= 0 && a->cfg.think_ms <= 60000))
                ld_cli_bad("--think-ms takes a number of ms in [0, 60000], not '%s'",
                           optarg);
            break;
        case 'm':
            if (strcmp(optarg, "fresh") == 0)
                a->cfg.mode = LD_POOL_FRESH;
            else if (strcmp(optarg, "pooled") == 0)
                a->cfg.mode = LD_POOL_POOLED;
            else if (strcmp(optarg, "pooled-trim") == 0)
                a->cfg.mode = LD_POOL_POOLED_TRIM;
            else
                ld_cli_bad("--mode is fresh, pooled or pooled-trim, not '%s'", optarg);
            break;
        case 's':
            if (strcmp(optarg, "copy") != 0 && strcmp(optarg, "own") != 0)
                ld_cli_bad("--stack-mode is copy or own, not '%s'", optarg);
            a->cfg.carriers.stack_mode = optarg[0] == 'c' ? LD_STACK_COPY : LD_STACK_OWN;
            break;
        case 'S':
            a->stack_size = ld_cli_count("--stack-size", optarg, 0, 1u << 26);
            break;
        case 'c':
            a->cfg.carriers.carriers =
                (unsigned)ld_cli_count("--carriers", optarg, 0, LD_CPUS_MAX);
            break;
        case 'C':
            a->cpus = (unsigned)ld_cli_count("--cpus", optarg, 0, LD_CPUS_MAX);
            break;
        case 'M':
            a->mem_limit = ld_cli_count("--mem-limit", optarg, 0, UINT64_C(1) << 50);
            break;
        case 'n':
            a->cfg.connections = ld_cli_count("--connections", optarg, 0, 1000000);
            break;
        case 'B':
            a->cfg.backend_conns = ld_cli_count("--backend-conns", optarg, 0, 1000000);
            break;
        case 'd':
            a->cfg.warmup_depth =
                (unsigned)ld_cli_count("--warmup-depth", optarg, 0, 1000);
            break;
        case 'k':
            a->cfg.trim_after =
                (unsigned)ld_cli_count("--trim-after", optarg, 0, 1000000);
            break;
        case 'h':
            fputs(usage, stdout);
            exit(0);
        case 'V':
            ld_cli_version();
            exit(0);
        default:
            ld_cli_bad("unknown option");
        }
    }
    if (optind < argc)
        ld_cli_bad("unexpected argument '%s'", argv[optind]);
    if (!a->have_backend)
        ld_cli_bad("--backend HOST:PORT is required");
    if (a->cfg.connections == 0 || a->cfg.backend_conns == 0)
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
