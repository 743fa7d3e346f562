/* fuzz_cli_forks.c: loomdist-forks's command line (fuzz_cli.h), which its main parses
 * up to the command each fork runs, then prints the usage (exit 0) or stops with its
 * one line (exit 2), as the harness's parse does here.
 * Beyond what every helper holds: a run has 1 to 1,000 forks, 1 or more measured
 * iterations, an output name, and a command to run that sets none of --warmup,
 * --iterations and --output.
 */
#include <hdf5.h>
#include <spawn.h>
#include <sys/wait.h>

#include "fuzz_cli.h"

#include "../../lib/cli/cli.c"      // NOLINT(bugprone-suspicious-include)
#include "../../tools/forks/main.c" // NOLINT(bugprone-suspicious-include)

/* The options, with the command as where it starts in argv and whether it is one a
 * fork may run: two parses' argv are two copies, so the pointer differs. */
typedef struct forks_opts {
    options o;
    long command_at;
    int command_ok;
} forks_opts;

static void forks_init(void *opts)
{
    memset(opts, 0, sizeof(forks_opts));
}

/* What main does with parse's answer, short of running the forks. */
static void forks_parse(int argc, char **argv, void *opts)
{
    forks_opts *f = opts;
    int rc = parse(&f->o, argc, argv);

    if (rc > 0)
        usage(stdout);
    if (rc != 0)
        exit(rc > 0 ? 0 : EXIT_BAD_INPUT);
    f->command_at = f->o.command - argv;
    f->command_ok = f->o.command[0] && !reserved_in(f->o.command);
    f->o.command = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static forks_opts a, b;

    if (fuzz_cli_run(data, size, "loomdist-forks", "\n", forks_parse, forks_init, &a, &b,
                     sizeof a) != FUZZ_CLI_RUN)
        return 0;
    const options *o = &a.o;
    fuzz_cli_require(o->forks >= 1 && o->forks <= 1000 && o->iterations >= 1 &&
                         o->iterations <= 100000 && o->warmup <= 100000,
                     "a count out of its range");
    fuzz_cli_require(o->output && o->output[0] && (!o->json || o->json[0]),
                     "an empty file name");
    fuzz_cli_require(a.command_at >= 1 && a.command_ok,
                     "no command, or one that sets what each fork is given");
    return 0;
}
