/* main.c: loomdist-load, closed-loop HTTP load as wrk makes it
 * (lib/http/include/http_load.h). This file is its options, its descriptor check, its
 * output and its exit codes: 0 after a run, 1 when no connection could be made or the run
 * could not start, 2 for bad input (and for more connections than the open-file limit
 * allows).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <signal.h>
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

/* A real number of seconds above 0 and at most 1e6, into the double at where. */
static void take_seconds(const char *name, const char *arg, void *where)
{
    char *end;

    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || *end != '\0' || errno != 0 || !isfinite(v) || v <= 0 || v > 1e6)
        ld_cli_bad("%s: expected a number of seconds above 0, got '%s'", name, arg);
    *(double *)where = v;
}

/* A request target: '/' first, and no space; into the string at where. */
static void take_path(const char *name, const char *arg, void *where)
{
    if (arg[0] != '/' || strpbrk(arg, " \t\r\n"))
        ld_cli_bad("%s: expected a target starting with '/' and no space, got '%s'", name,
                   arg);
    *(const char **)where = arg;
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

static int quiet; /* --quiet: the machine line alone */

/* Every argument into cfg and the server's address; --help and --version exit 0, a
 * bad one 2. */
static void parse_args(int argc, char **argv, ld_http_load_config *cfg,
                       struct sockaddr_storage *ss)
{
    const ld_cli_opt opts[] = {
        LD_CLI_OPT_COUNT("connections", &cfg->connections, 1, 1000000),
        LD_CLI_OPT_COUNT("threads", &cfg->threads, 1, 256),
        LD_CLI_OPT_CALL("duration", &cfg->seconds, take_seconds),
        LD_CLI_OPT_CALL("path", &cfg->path, take_path),
        LD_CLI_OPT_CALL("timeout", &cfg->timeout_s, take_seconds),
        LD_CLI_OPT_CALL("drain", &cfg->drain_s, take_seconds),
        LD_CLI_OPT_FLAG("quiet", &quiet),
        {.name = NULL},
    };
    const ld_cli_spec spec = {usage, opts, 1, LD_CLI_VERSION | LD_CLI_SHORT_HELP};

    int at = ld_cli_parse(&spec, argc, argv);
    if (at == argc)
        ld_cli_bad("expected HOST:PORT");
    if (cfg->threads > cfg->connections)
        ld_cli_bad("--threads %u is more than --connections %" PRIu64, cfg->threads,
                   cfg->connections);
    parse_target(argv[at], ss);
    cfg->host = argv[at];
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
