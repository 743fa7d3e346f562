/* fuzz_cli_load.c: loomdist-load's command line (fuzz_cli.h). Host names are looked
 * up as numeric addresses only, so that no input waits on a name server.
 * Beyond what every helper holds: a run has 1 to 1,000,000 connections, no more
 * threads than connections, a duration and a timeout above 0 and finite, a path that
 * starts with '/' and holds no space, and the address it was given.
 */
#include <math.h>
#include <netdb.h>
#include <sys/socket.h>

#include "fuzz_cli.h"

/* getaddrinfo for numeric hosts and ports only: no name server is asked. */
static int fuzz_numeric_getaddrinfo(const char *host, const char *port,
                                    const struct addrinfo *hints, struct addrinfo **res)
{
    struct addrinfo h = *hints;

    h.ai_flags |= AI_NUMERICHOST | AI_NUMERICSERV;
    return getaddrinfo(host, port, &h, res);
}
#define getaddrinfo fuzz_numeric_getaddrinfo

#include "../../lib/cli/cli.c"      // NOLINT(bugprone-suspicious-include)
#include "../../lib/cli/cli_opts.c" // NOLINT(bugprone-suspicious-include)
#include "../../tools/load/main.c"  // NOLINT(bugprone-suspicious-include)

#undef getaddrinfo

typedef struct load_opts {
    ld_http_load_config cfg;
    struct sockaddr_storage ss;
    int quiet;
    int own_addr; /* cfg.addr was ss, the address parsed; cfg.addr is then cleared, so
                     that two parses' options compare equal */
} load_opts;

/* main's defaults, before the options. */
static void load_init(void *opts)
{
    load_opts *o = opts;

    memset(o, 0, sizeof *o);
    o->cfg.connections = 100;
    o->cfg.threads = 1;
    o->cfg.seconds = 10;
    o->cfg.path = "/";
    o->cfg.timeout_s = 10;
    quiet = 0;
}

static void load_parse(int argc, char **argv, void *opts)
{
    load_opts *o = opts;

    ld_cli_program = LOAD_NAME;
    parse_args(argc, argv, &o->cfg, &o->ss);
    o->quiet = quiet;
    o->own_addr = o->cfg.addr == (const struct sockaddr *)&o->ss;
    o->cfg.addr = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static load_opts a, b;

    if (fuzz_cli_run(data, size, LOAD_NAME, " (try --help)\n", load_parse, load_init, &a,
                     &b, sizeof a) != FUZZ_CLI_RUN)
        return 0;
    const ld_http_load_config *c = &a.cfg;
    fuzz_cli_require(c->connections >= 1 && c->connections <= 1000000,
                     "connections out of range");
    fuzz_cli_require(c->threads >= 1 && c->threads <= c->connections,
                     "threads out of range, or past the connections");
    fuzz_cli_require(isfinite(c->seconds) && c->seconds > 0 && isfinite(c->timeout_s) &&
                         c->timeout_s > 0 && isfinite(c->drain_s) && c->drain_s >= 0,
                     "a duration, timeout or drain out of range");
    fuzz_cli_require(c->path[0] == '/' && !strpbrk(c->path, " \t\r\n"),
                     "a path that is not a target");
    fuzz_cli_require(a.own_addr && c->host != NULL, "a run with no address");
    fuzz_cli_require(a.ss.ss_family == AF_INET || a.ss.ss_family == AF_INET6,
                     "an address of no family");
    return 0;
}
