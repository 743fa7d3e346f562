/* main.c: loomdist-clearinghouse, settle's three checks and a think-time backend
 * served over HTTP/1.1 until SIGINT or SIGTERM, then its stats on stderr. The service
 * is services/clearinghouse/clearinghouse.h; this file is its options, its signals and
 * its exit codes: 0 when stopped by a signal, 1 when it cannot serve, 2 for bad input.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <uv.h>

#include "clearinghouse.h"
#include "cli.h"

#define CH_NAME "loomdist-clearinghouse"
#define CH_DEFAULT_HOST "127.0.0.1"
#define CH_DEFAULT_PORT 8470

static const char usage[] =
    "Usage: " CH_NAME " [--listen HOST:PORT] [bounds]\n"
    "\n"
    "Serves settle's checks over HTTP/1.1, each answered after its planned latency:\n"
    "  GET /counterparty?trade=ID&seed=S&scale=X&fail=P\n"
    "  GET /buying-power?trade=ID&seed=S&scale=X&fail=P\n"
    "  GET /shares?trade=ID&seed=S&scale=X&fail=P        (SELL trades only)\n"
    "answer 200 with \"pass\" or \"fail\", the outcome settle's sleep mode draws for\n"
    "trade ID of the book seeded S, at --latency-scale X and --fail-rate P.\n"
    "  GET /think?ms=N                                   (N in [0, 60000], real)\n"
    "answers 200 \"ok\" N ms after it arrives: a backend with think time. Both kinds\n"
    "count in the stats (served, latency).\n"
    "The first line on stdout, flushed, says where it listens:\n"
    "  " CH_NAME ": listening on http://HOST:PORT\n"
    "SIGINT or SIGTERM prints the stats on stderr (unless --quiet), exits 0.\n"
    "\n"
    "  --listen HOST:PORT     an IPv4 address or a [bracketed] IPv6 one, and a port\n"
    "                         (default 127.0.0.1:8470; port 0 takes a free one)\n"
    "  --max-connections N    connections open at once, past it 503 (default 1024, or\n"
    "                         fewer under a lower descriptor limit: at most the limit\n"
    "                         less 32)\n"
    "  --max-header-bytes N   URL, header names and values of a request, past it 431\n"
    "                         (default 8192)\n"
    "  --max-headers N        header fields of a request, past it 431 (default 64)\n"
    "  --max-body-bytes N     body of a request, past it 413 (default 65536)\n"
    "  --max-requests N       requests per connection, a count: the last one's answer\n"
    "                         closes it (default 10000)\n"
    "  --request-timeout MS   the longest it waits on a client: for a whole request\n"
    "                         (past it 408), an idle connection, unread answers\n"
    "                         (default 20000)\n"
    "  --pipeline N           requests per connection read and not yet answered, past\n"
    "                         it reading pauses (default 32)\n"
    "  --max-held N           requests read and not yet answered on all connections\n"
    "                         together, those of clients that have gone included,\n"
    "                         past it 503 (default 4096, or twice the connections\n"
    "                         if more)\n"
    "  --quiet                no stats on stderr when it ends\n"
    "  --stop-on-eof          stop, as at SIGTERM, when standard input ends: a parent\n"
    "                         that holds the other end stops it by dying too\n"
    "  -h, --help             this text\n"
    "  --version              the version and git commit\n";

/* HOST:PORT, or [HOST]:PORT for IPv6, with HOST a numeric address. */
static int parse_listen(const char *arg, struct sockaddr_storage *ss)
{
    char host[64];
    const char *port;
    int v6 = arg[0] == '[';
    const char *end = v6 ? strchr(arg, ']') : strrchr(arg, ':');

    if (!end || (v6 && end[1] != ':'))
        return -EINVAL;
    size_t len = (size_t)(end - arg) - (size_t)v6;
    port = end + 1 + v6;
    if (len == 0 || len >= sizeof host || port[0] < '0' || port[0] > '9')
        return -EINVAL;
    memcpy(host, arg + v6, len);
    host[len] = '\0';
    char *rest;
    unsigned long p = strtoul(port, &rest, 10);
    if (*rest != '\0' || p > 65535)
        return -EINVAL;
    if (v6)
        return uv_ip6_addr(host, (int)p, (struct sockaddr_in6 *)ss);
    return uv_ip4_addr(host, (int)p, (struct sockaddr_in *)ss);
}

/* Descriptors kept from connections: the listener, stdio, the loop's own. */
#define CH_FD_SPARE 32

/* The connection bound below the descriptor limit, so that the 503 bound is the one a
 * client meets: the default lowered to fit, one given above it refused. */
static void connections_under_fd_limit(ld_http_limits *lim)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return;
    rlim_t room =
        rl.rlim_cur > 2 * CH_FD_SPARE ? rl.rlim_cur - CH_FD_SPARE : rl.rlim_cur / 2 + 1;
    if (lim->connections == 0)
        lim->connections = room < LD_HTTP_CONNECTIONS ? (uint32_t)room : 0;
    else if (lim->connections > room)
        ld_cli_bad("--max-connections %u is past what the descriptor limit (%llu) "
                   "leaves: at most %llu",
                   lim->connections, (unsigned long long)rl.rlim_cur,
                   (unsigned long long)room);
}

static int quiet;      /* --quiet: no stats on stderr at the end */
static int stdin_stop; /* --stop-on-eof: the end of stdin stops it, as SIGTERM does */

/* --listen's value into the sockaddr_storage at where. */
static void take_listen(const char *name, const char *arg, void *where)
{
    if (parse_listen(arg, where) != 0)
        ld_cli_bad("%s: expected HOST:PORT with a numeric IPv4 address or a [bracketed] "
                   "IPv6 one, got '%s'",
                   name, arg);
}

/* Every option into the address and the bounds, each bound a whole number from 1 to
 * 2^32 - 1; --help and --version exit 0, a bad one 2. */
static void parse_args(int argc, char **argv, struct sockaddr_storage *ss,
                       ld_http_limits *lim)
{
    const ld_cli_opt opts[] = {
        LD_CLI_OPT_CALL("listen", ss, take_listen),
        LD_CLI_OPT_COUNT("max-connections", &lim->connections, 1, UINT32_MAX),
        LD_CLI_OPT_COUNT("max-header-bytes", &lim->header_bytes, 1, UINT32_MAX),
        LD_CLI_OPT_COUNT("max-headers", &lim->headers, 1, UINT32_MAX),
        LD_CLI_OPT_COUNT("max-body-bytes", &lim->body_bytes, 1, UINT32_MAX),
        LD_CLI_OPT_COUNT("max-requests", &lim->requests, 1, UINT32_MAX),
        LD_CLI_OPT_COUNT("request-timeout", &lim->request_timeout_ms, 1, UINT32_MAX),
        LD_CLI_OPT_COUNT("pipeline", &lim->pipeline, 1, UINT32_MAX),
        LD_CLI_OPT_COUNT("max-held", &lim->held, 1, UINT32_MAX),
        LD_CLI_OPT_FLAG("quiet", &quiet),
        LD_CLI_OPT_FLAG("stop-on-eof", &stdin_stop),
        {.name = NULL},
    };
    const ld_cli_spec spec = {usage, opts, 0, LD_CLI_VERSION | LD_CLI_SHORT_HELP};

    uv_ip4_addr(CH_DEFAULT_HOST, CH_DEFAULT_PORT, (struct sockaddr_in *)ss);
    ld_cli_parse(&spec, argc, argv);
    connections_under_fd_limit(lim);
}

typedef struct ch_main {
    ld_clearinghouse *ch;
    uv_signal_t sigint, sigterm;
    uv_poll_t input; /* --stop-on-eof: stdin */
    ld_clearinghouse_stats stats;
} ch_main;

/* SIGINT, SIGTERM or the end of stdin: keep the stats, close everything, and let
 * uv_run return. */
static void stop(ch_main *m)
{
    ld_clearinghouse_stats_get(m->ch, &m->stats);
    ld_clearinghouse_close(m->ch);
    uv_close((uv_handle_t *)&m->sigint, NULL);
    uv_close((uv_handle_t *)&m->sigterm, NULL);
    if (stdin_stop)
        uv_close((uv_handle_t *)&m->input, NULL);
}

static void on_signal(uv_signal_t *h, int signum)
{
    (void)signum;
    stop(h->data);
}

/* Whatever stdin brings is read and dropped; its end stops the service. */
static void on_input(uv_poll_t *h, int status, int events)
{
    char buf[256];
    (void)events;
    if (status < 0 || read(0, buf, sizeof buf) <= 0)
        stop(h->data);
}

int main(int argc, char **argv)
{
    struct sockaddr_storage ss;
    ld_http_limits lim = {0};
    char name[INET6_ADDRSTRLEN] = "";
    uv_loop_t loop;
    ch_main m = {0};

    ld_cli_program = CH_NAME;
    parse_args(argc, argv, &ss, &lim);
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-answer is an error code, not a death */
    uv_loop_init(&loop);
    /* A file or /dev/null cannot be polled: say so rather than watch nothing. */
    int rc = stdin_stop ? uv_poll_init(&loop, &m.input, 0) : 0;
    if (rc != 0) {
        fprintf(stderr,
                CH_NAME ": --stop-on-eof needs standard input to be a pipe, a socket or "
                        "a terminal: %s\n",
                uv_strerror(rc));
        uv_loop_close(&loop);
        return 2;
    }
    rc = ld_clearinghouse_open(&m.ch, &loop, (struct sockaddr *)&ss, &lim);
    if (rc != 0) {
        uv_ip_name((struct sockaddr *)&ss, name, sizeof name);
        fprintf(stderr, CH_NAME ": cannot listen on %s: %s\n", name, uv_strerror(rc));
        if (stdin_stop)
            uv_close((uv_handle_t *)&m.input, NULL);
        uv_run(&loop, UV_RUN_NOWAIT);
        uv_loop_close(&loop);
        return 1;
    }
    m.sigint.data = m.sigterm.data = &m;
    uv_signal_init(&loop, &m.sigint);
    uv_signal_init(&loop, &m.sigterm);
    uv_signal_start(&m.sigint, on_signal, SIGINT);
    uv_signal_start(&m.sigterm, on_signal, SIGTERM);
    if (stdin_stop) {
        m.input.data = &m;
        uv_poll_start(&m.input, UV_READABLE | UV_DISCONNECT, on_input);
    }
    uv_ip_name((struct sockaddr *)&ss, name, sizeof name);
    printf(ss.ss_family == AF_INET6 ? CH_NAME ": listening on http://[%s]:%d\n"
                                    : CH_NAME ": listening on http://%s:%d\n",
           name, ld_clearinghouse_port(m.ch));
    fflush(stdout);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    if (!quiet)
        ld_clearinghouse_print(&m.stats, stderr);
    return 0;
}
