/* loomdist-forks: run loomdist as JMH runs a benchmark, in --forks fresh processes,
 * each with --warmup-iterations and --measurement-iterations, and score it as JMH
 * does (forks.h).
 *
 * Why a launcher: under MPI a rank must not fork(), and a loomdist that re-executed
 * itself would need its driver to know of forks. This program is no MPI process: it
 * posix_spawns the user's command line (`loomdist ...` or `mpirun ... loomdist ...`)
 * once per fork, so each fork is a new mpirun, new ranks and a new address space.
 *
 * Exit status: 0 when every fork ran and the results were written, 1 when a fork or
 * a write failed, 2 on bad input.
 */
#include "forks.h"

#include "cli.h"

#include <errno.h>
#include <hdf5.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

enum { EXIT_BAD_INPUT = 2 };
#define PATH_MAX_LEN 4096

/* The launcher's options; the rest of argv is the command each fork runs. */
typedef struct options {
    unsigned forks, warmup, iterations;
    int set_forks, set_warmup, set_iterations;
    const char *json;
    const char *output;
    char **command;
} options;

static void usage(FILE *out)
{
    fputs(
        "Usage: loomdist-forks [OPTIONS] [--] COMMAND...\n\n"
        "Run COMMAND (loomdist, or mpirun ... loomdist) once per fork, each a fresh\n"
        "process, and score every job/strategy as JMH does: the mean over all measured\n"
        "iterations of all forks, its 99.9% error, percentiles and raw data.\n\n"
        "  --forks N                   fresh processes (default 2)\n"
        "  --warmup-iterations N       discarded operations per fork, loomdist's\n"
        "                              --warmup (default 1)\n"
        "  --measurement-iterations N  measured operations per fork, loomdist's\n"
        "                              --iterations (default 3)\n"
        "  --study                     the study's method: 5 forks, 3 warm-up and 5\n"
        "                              measurement iterations (the options above\n"
        "                              still override it)\n"
        "  --json FILE                 also write the results in JMH's JSON format\n"
        "  --output FILE.h5            fork k writes FILE.fork<k>.h5 (default\n"
        "                              loomdist.h5: loomdist.fork1.h5, ...)\n"
        "  --help                      this text\n"
        "  --version                   the version and git commit\n\n"
        "COMMAND must not set --warmup, --iterations or --output: each fork gets them.\n"
        "Example: loomdist-forks --study --json models.json \\\n"
        "             mpirun -n 1 ./loomdist --jobs models --tasks 50000 --profile low\n",
        out);
}

/* A count in [lo, hi], or -1. */
static long count_arg(const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : -1;
    return v && errno == 0 && end != v && *end == '\0' && n >= lo && n <= hi ? n : -1;
}

/* One option that takes a count: its value, or a message. */
static int take_count(const char *name, const char *v, long lo, long hi, unsigned *out,
                      int *set)
{
    long n = count_arg(v, lo, hi);
    if (n < 0) {
        fprintf(stderr, "loomdist-forks: %s takes a whole number from %ld to %ld\n", name,
                lo, hi);
        return -1;
    }
    *out = (unsigned)n;
    *set = 1;
    return 0;
}

/* Does the command set what each fork is given? */
static const char *reserved_in(char **command)
{
    static const char *const reserved[] = {"--warmup", "--iterations", "--output"};
    for (char **a = command; *a; a++)
        for (size_t r = 0; r < 3; r++) {
            size_t n = strlen(reserved[r]);
            if (strncmp(*a, reserved[r], n) == 0 && ((*a)[n] == '\0' || (*a)[n] == '='))
                return reserved[r];
        }
    return NULL;
}

/* An argument as a message quotes it: each control character (a newline, a terminal
 * escape) shows as '?', so the message stays one line. */
static const char *printable(const char *arg, char *buf, size_t len)
{
    size_t n = 0;
    for (; arg[n] != '\0' && n + 1 < len; n++)
        buf[n] = (unsigned char)arg[n] < 0x20 || arg[n] == 0x7f ? '?' : arg[n];
    buf[n] = '\0';
    return buf;
}

/* One of the launcher's options at argv[*i], and its value: 0 taken, 1 help, 2 version,
 * -1 bad. */
static int parse_one(options *o, char **argv, int *i)
{
    char shown[256];
    const char *a = argv[*i], *v = argv[*i + 1];
    if (strcmp(a, "--help") == 0)
        return 1;
    if (strcmp(a, "--version") == 0)
        return 2;
    if (strcmp(a, "--study") == 0)
        return 0; /* parse applies it once the others are known */
    (*i)++;
    if (strcmp(a, "--forks") == 0)
        return take_count(a, v, 1, 1000, &o->forks, &o->set_forks);
    if (strcmp(a, "--warmup-iterations") == 0)
        return take_count(a, v, 0, 100000, &o->warmup, &o->set_warmup);
    if (strcmp(a, "--measurement-iterations") == 0)
        return take_count(a, v, 1, 100000, &o->iterations, &o->set_iterations);
    if ((strcmp(a, "--json") == 0 || strcmp(a, "--output") == 0) && v && *v) {
        *(a[2] == 'j' ? &o->json : &o->output) = v;
        return 0;
    }
    fprintf(stderr,
            strcmp(a, "--json") == 0 || strcmp(a, "--output") == 0
                ? "loomdist-forks: %s takes a file name\n"
                : "loomdist-forks: unknown option %s (see --help)\n",
            printable(a, shown, sizeof shown));
    return -1;
}

/* The launcher's options, up to the command: 0 to run, 1 help, 2 version, -1 bad
 * input. */
static int parse(options *o, int argc, char **argv)
{
    *o = (options){.forks = 2, .warmup = 1, .iterations = 3, .output = "loomdist.h5"};
    int study = 0, i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        study |= strcmp(argv[i], "--study") == 0;
        int rc = parse_one(o, argv, &i);
        if (rc != 0)
            return rc;
    }
    if (study) {
        o->forks = o->set_forks ? o->forks : 5;
        o->warmup = o->set_warmup ? o->warmup : 3;
        o->iterations = o->set_iterations ? o->iterations : 5;
    }
    o->command = argv + i;
    const char *reserved = i < argc ? reserved_in(o->command) : NULL;
    if (i >= argc || reserved) {
        fprintf(stderr,
                reserved ? "loomdist-forks: the command sets %s; each fork gets it from "
                           "loomdist-forks (see --help)\n"
                         : "loomdist-forks: no command to run (see --help)%s\n",
                reserved ? reserved : "");
        return -1;
    }
    return 0;
}

/* Fork k's file: the output's name with .fork<k> before its .h5. */
static void fork_path(const char *output, unsigned k, char *out, size_t len)
{
    size_t n = strlen(output);
    size_t stem = n > 3 && strcmp(output + n - 3, ".h5") == 0 ? n - 3 : n;
    snprintf(out, len, "%.*s.fork%u.h5", (int)stem, output, k + 1);
}

/* One fork: the command with the method and its file, in a new process, waited for. */
static int run_fork(const options *o, unsigned k, const char *path)
{
    size_t n = 0;
    while (o->command[n])
        n++;
    char **argv = calloc(n + 7, sizeof *argv);
    char warmup[16], iterations[16];
    if (!argv)
        return -1;
    snprintf(warmup, sizeof warmup, "%u", o->warmup);
    snprintf(iterations, sizeof iterations, "%u", o->iterations);
    memcpy(argv, o->command, n * sizeof *argv);
    char *extra[] = {"--warmup", warmup,     "--iterations",
                     iterations, "--output", (char *)path};
    memcpy(argv + n, extra, sizeof extra);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ), status = 0;
    free(argv);
    if (rc != 0) {
        fprintf(stderr, "loomdist-forks: cannot run %s: %s\n", o->command[0],
                strerror(rc));
        return -1;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "loomdist-forks: fork %u of %u failed (%s %d)\n", k + 1, o->forks,
                WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return -1;
    }
    fprintf(stderr, "loomdist-forks: fork %u of %u (pid %d) wrote %s\n", k + 1, o->forks,
            (int)pid, path);
    return 0;
}

/* The JSON under a temporary name, renamed once complete. */
static int write_json(const ld_study *s, const char *path)
{
    char tmp[PATH_MAX_LEN + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f) {
        ld_jmh_write_json(s, f);
        if (fclose(f) == 0 && rename(tmp, path) == 0)
            return 0;
    }
    fprintf(stderr, "loomdist-forks: cannot write --json %s: %s\n", path,
            strerror(errno));
    unlink(tmp);
    return -1;
}

int main(int argc, char **argv)
{
    options o;
    ld_cli_program = "loomdist-forks";
    int rc = parse(&o, argc, argv);
    if (rc == 1)
        usage(stdout);
    else if (rc == 2)
        ld_cli_version();
    if (rc != 0)
        return rc > 0 ? 0 : EXIT_BAD_INPUT;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    ld_study s = {.forks = o.forks, .warmup = o.warmup, .iterations = o.iterations};
    char path[PATH_MAX_LEN], err[PATH_MAX_LEN + 128];
    rc = 0;
    for (unsigned k = 0; rc == 0 && k < o.forks; k++) {
        fork_path(o.output, k, path, sizeof path);
        rc = run_fork(&o, k, path);
        if (rc == 0 && (rc = ld_study_read_fork(&s, k, path, err, sizeof err)) != 0)
            fprintf(stderr, "loomdist-forks: %s\n", err);
    }
    if (rc == 0) {
        ld_jmh_print_summary(&s, stdout);
        if (o.json)
            rc = write_json(&s, o.json);
    }
    ld_study_free(&s);
    return rc == 0 ? 0 : 1;
}
