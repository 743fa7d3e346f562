/* main.c: loomdist-load, closed-loop HTTP load as wrk makes it
 * (lib/http/include/http_load.h). This file is its options, its descriptor check, its
 * output and its exit codes: 0 after a run, 1 when no connection could be made or the run
 * could not start, 2 for bad input (and for more connections than the open-file limit
 * allows).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "http_load.h"

#define LOAD_NAME "loomdist-load"

static const char usage[] =
    "Usage: " LOAD_NAME " [options] HOST:PORT\n"
    "\n"
    "Closed-loop HTTP/1.1 load, as wrk makes it: every connection is opened at the\n"
    "start, kept alive, and sends GET PATH again as soon as the previous response is\n"
    "read. After the duration nothing more is sent and every request in flight is\n"
    "waited for (the drain), so the count is exactly what the server answered.\n"
    "HOST is a name or a numeric address ([bracketed] for IPv6).\n"
    "\n"
    "  --connections N   connections kept open (default 100); with 64 descriptors to\n"
    "                    spare they must fit the open-file limit, raised to its hard\n"
    "                    limit first\n"
    "  --threads T       OS threads, each an event loop with its share (default 1)\n"
    "  --duration S      seconds of sending, a real number (default 10)\n"
    "  --path P          the request's target (default /)\n"
    "  --timeout S       a request unanswered this long is a timeout (default 10)\n"
    "  --drain S         the longest drain (default: the longest latency seen + 5)\n"
    "  --quiet           no summary on stderr, the line on stdout alone\n"
    "  -h, --help        this text\n"
    "  --version         the version and git commit\n"
    "\n"
    "A summary goes to stderr, and one line to stdout:\n"
    "  requests=N errors=N seconds=X p50_ns=N p90_ns=N p99_ns=N max_ns=N\n"
    "requests counts responses read whole, errors the failed connects, reads and\n"
    "writes, resets, non-2xx responses and timeouts, seconds the window from the first\n"
    "request to the last response; latency is from a request's write to its response\n"
    "read whole, within 1/64.\n";

/* A real number of seconds in [min, 1e6]; min itself only when allow_min. */
static double parse_seconds(const char *name, const char *arg, double min, int allow_min)
{
    char *end;

    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || *end != '\0' || errno != 0 || !isfinite(v) || v < min ||
        (v == min && !allow_min) || v > 1e6)
        ld_cli_bad("%s: expected a number of seconds %s %g, got '%s'", name,
                   allow_min ? "from" : "above", min, arg);
    return v;
}

/* HOST:PORT or [HOST]:PORT, resolved to its first TCP address. */
static void parse_target(const char *arg, struct sockaddr_storage *ss)
{
    char host[256];
    int v6 = arg[0] == '[';
    const char *end = v6 ? strchr(arg, ']') : strrchr(arg, ':');

    if (!end || (v6 && end[1] != ':'))
        ld_cli_bad("expected HOST:PORT, got '%s'", arg);
    size_t len = (size_t)(end - arg) - (size_t)v6;
    const char *port = end + 1 + v6;
    if (len == 0 || len >= sizeof host)
        ld_cli_bad("expected HOST:PORT, got '%s'", arg);
    memcpy(host, arg + v6, len);
    host[len] = '\0';
    ld_cli_count("the port", port, 1, 65535);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0)
        ld_cli_bad("cannot resolve '%s': %s", host, gai_strerror(rc));
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
}

enum {
    OPT_CONNS = 256,
    OPT_THREADS,
    OPT_DURATION,
    OPT_PATH,
    OPT_TIMEOUT,
    OPT_DRAIN,
    OPT_QUIET
};

static int quiet; /* --quiet: the machine line alone */

static const struct option long_opts[] = {
    {"connections", required_argument, NULL, OPT_CONNS},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"path", required_argument, NULL, OPT_PATH},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"drain", required_argument, NULL, OPT_DRAIN},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* One option into cfg; --help and --version exit 0, a bad one 2. */
static void parse_opt(int c, char **argv, ld_http_load_config *cfg)
{
    switch (c) {
    case OPT_CONNS:
        cfg->connections = ld_cli_count("--connections", optarg, 1, 1000000);
        break;
    case OPT_THREADS:
        cfg->threads = (unsigned)ld_cli_count("--threads", optarg, 1, 256);
        break;
    case OPT_DURATION:
        cfg->seconds = parse_seconds("--duration", optarg, 0, 0);
        break;
    case OPT_PATH:
        if (optarg[0] != '/' || strpbrk(optarg, " \t\r\n"))
            ld_cli_bad("--path: expected a target starting with '/' and no space, got "
                       "'%s'",
                       optarg);
        cfg->path = optarg;
        break;
    case OPT_TIMEOUT:
        cfg->timeout_s = parse_seconds("--timeout", optarg, 0, 0);
        break;
    case OPT_DRAIN:
        cfg->drain_s = parse_seconds("--drain", optarg, 0, 0);
        break;
    case OPT_QUIET:
        quiet = 1;
        break;
    case 'h':
        fputs(usage, stdout);
        exit(0);
    case 'V':
        ld_cli_version();
        exit(0);
    case ':':
        ld_cli_bad("%s needs a value", argv[optind - 1]);
    default:
        ld_cli_bad("unknown option '%s'", argv[optind - 1]);
    }
}

/* Every argument into cfg and the server's address. */
static void parse_args(int argc, char **argv, ld_http_load_config *cfg,
                       struct sockaddr_storage *ss)
{
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1)
        parse_opt(c, argv, cfg);
    if (optind == argc)
        ld_cli_bad("expected HOST:PORT");
    if (optind + 1 < argc)
        ld_cli_bad("unexpected argument '%s'", argv[optind + 1]);
    if (cfg->threads > cfg->connections)
        ld_cli_bad("--threads %u is more than --connections %" PRIu64, cfg->threads,
                   cfg->connections);
    parse_target(argv[optind], ss);
    cfg->host = argv[optind];
    cfg->addr = (struct sockaddr *)ss;
}

/* The human summary. */
static void summary(const ld_http_load_config *cfg, const ld_http_load_report *r)
{
    fprintf(stderr,
            LOAD_NAME ": %" PRIu64 " requests in %.2f s (%.0f req/s) on %" PRIu64
                      " connections, %u threads, http://%s%s\n",
            r->requests, r->seconds,
            r->seconds > 0 ? (double)r->requests / r->seconds : 0, cfg->connections,
            cfg->threads, cfg->host, cfg->path);
    fprintf(stderr,
            LOAD_NAME ": latency p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
            (double)r->p50_ns / 1e6, (double)r->p90_ns / 1e6, (double)r->p99_ns / 1e6,
            (double)r->max_ns / 1e6);
    fprintf(stderr,
            LOAD_NAME ": errors %" PRIu64 ": connect %" PRIu64 ", read %" PRIu64
                      ", reset %" PRIu64 ", non-2xx %" PRIu64 ", timeout %" PRIu64
                      "; %" PRIu64 " connections made\n",
            r->errors, r->connect_errors, r->read_errors, r->resets, r->non_2xx,
            r->timeouts, r->connected);
}

int main(int argc, char **argv)
{
    ld_http_load_config cfg = {
        .connections = 100, .threads = 1, .seconds = 10, .path = "/", .timeout_s = 10};
    struct sockaddr_storage ss;
    ld_http_load_report r;
    uint64_t soft, hard;

    ld_cli_program = LOAD_NAME;
    parse_args(argc, argv, &cfg, &ss);
    if (ld_http_load_fd_room(cfg.connections, &soft, &hard) != 0)
        ld_cli_bad("--connections %" PRIu64 " needs %" PRIu64
                   " open files, past the open-file limit RLIMIT_NOFILE (soft %" PRIu64
                   ", hard %" PRIu64 ")",
                   cfg.connections, cfg.connections + LD_LOAD_SPARE_FDS, soft, hard);
    signal(SIGPIPE, SIG_IGN); /* a server gone mid-request is an error count */
    int rc = ld_http_load_run(&cfg, &r);
    if (rc != 0) {
        fprintf(stderr, LOAD_NAME ": cannot run: %s\n", strerror(-rc));
        return 1;
    }
    if (!quiet)
        summary(&cfg, &r);
    printf("requests=%" PRIu64 " errors=%" PRIu64 " seconds=%.6f p50_ns=%" PRId64
           " p90_ns=%" PRId64 " p99_ns=%" PRId64 " max_ns=%" PRId64 "\n",
           r.requests, r.errors, r.seconds, r.p50_ns, r.p90_ns, r.p99_ns, r.max_ns);
    if (r.connected == 0) {
        fprintf(stderr, LOAD_NAME ": no connection to %s could be made\n", cfg.host);
        return 1;
    }
    return 0;
}
