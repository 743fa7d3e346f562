/* fuzz_cli_clearinghouse.c: loomdist-clearinghouse's command line (fuzz_cli.h).
 * Beyond what every helper holds: a run listens on an IPv4 or an IPv6 address.
 */
#include <sys/socket.h>
#include <uv.h>

#include "fuzz_cli.h"

#include "../../lib/cli/cli.c"                 // NOLINT(bugprone-suspicious-include)
#include "../../lib/cli/cli_opts.c"            // NOLINT(bugprone-suspicious-include)
#include "../../services/clearinghouse/main.c" // NOLINT(bugprone-suspicious-include)

typedef struct ch_opts {
    struct sockaddr_storage ss;
    ld_http_limits lim;
    int quiet, stdin_stop;
} ch_opts;

static void ch_init(void *opts)
{
    memset(opts, 0, sizeof(ch_opts));
    quiet = stdin_stop = 0;
}

static void ch_parse(int argc, char **argv, void *opts)
{
    ch_opts *o = opts;

    ld_cli_program = CH_NAME;
    parse_args(argc, argv, &o->ss, &o->lim);
    o->quiet = quiet;
    o->stdin_stop = stdin_stop;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ch_opts a, b;

    if (fuzz_cli_run(data, size, CH_NAME, " (try --help)\n", ch_parse, ch_init, &a, &b,
                     sizeof a) != FUZZ_CLI_RUN)
        return 0;
    int family = a.ss.ss_family;
    fuzz_cli_require(family == AF_INET || family == AF_INET6,
                     "a listen address of no family");
    return 0;
}
