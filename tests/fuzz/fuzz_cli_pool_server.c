/* fuzz_cli_pool_server.c: loomdist-pool-server's command line (fuzz_cli.h).
 * Beyond what every helper holds: a run has a backend, one mode of the three, a think
 * time in [0, 60000] ms, 1 or more connections and backend connections, and the
 * other counts within what --help says.
 */
#include <getopt.h>
#include <sys/resource.h>
#include <uv.h>

#include "fuzz_cli.h"

#include "../../lib/cli/cli.c"               // NOLINT(bugprone-suspicious-include)
#include "../../lib/cli/cli_opts.c"          // NOLINT(bugprone-suspicious-include)
#include "../../services/pool_server/main.c" // NOLINT(bugprone-suspicious-include)

/* main's defaults, before the options. */
static void pool_init(void *opts)
{
    args *a = opts;

    memset(a, 0, sizeof *a);
    a->cfg.think_ms = 30;
    a->cfg.mode = LD_POOL_FRESH;
    a->cfg.connections = 10000;
    a->cfg.backend_conns = 4096;
    a->cfg.warmup_depth = 4;
    a->cfg.trim_after = 8;
    a->cfg.carriers.stack_mode = LD_STACK_COPY;
    a->stack_size = LD_GT_STACK_DEFAULT;
    uv_ip4_addr("127.0.0.1", 0, &a->cfg.listen);
}

static void pool_parse(int argc, char **argv, void *opts)
{
    ld_cli_program = NAME;
    parse_args(argc, argv, opts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static args a, b;

    if (fuzz_cli_run(data, size, NAME, " (try --help)\n", pool_parse, pool_init, &a, &b,
                     sizeof a) != FUZZ_CLI_RUN)
        return 0;
    const ld_pool_server_config *c = &a.cfg;
    fuzz_cli_require(a.have_backend && c->backend.sin_family == AF_INET &&
                         c->listen.sin_family == AF_INET,
                     "a run without an IPv4 backend and listen address");
    fuzz_cli_require(c->mode == LD_POOL_FRESH || c->mode == LD_POOL_POOLED ||
                         c->mode == LD_POOL_POOLED_TRIM,
                     "a mode outside the three");
    fuzz_cli_require(c->carriers.stack_mode == LD_STACK_COPY ||
                         c->carriers.stack_mode == LD_STACK_OWN,
                     "a stack mode outside the two");
    fuzz_cli_require(c->think_ms >= 0 && c->think_ms <= 60000,
                     "a think time out of range");
    fuzz_cli_require(c->connections >= 1 && c->connections <= 1000000 &&
                         c->backend_conns >= 1 && c->backend_conns <= 1000000,
                     "connections out of range");
    fuzz_cli_require(a.stack_size <= (1u << 26) && a.cpus <= LD_CPUS_MAX &&
                         c->carriers.carriers <= LD_CPUS_MAX &&
                         a.mem_limit <= (UINT64_C(1) << 50) && c->warmup_depth <= 1000 &&
                         c->trim_after <= 1000000,
                     "a count out of its range");
    return 0;
}
