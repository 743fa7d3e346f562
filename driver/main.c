/* main.c: loomdist's driver. Parse, check, deal the book, run, print, write.
 *
 * Every check that can fail on bad input runs before any work, on every rank, and
 * ends every rank with status 2 and one message from rank 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpuinfo.h"
#include "h5out.h"
#include "interrupt.h"
#include "node.h"
#include "ompi_env.h"
#include "options.h"
#include "partition.h"
#include "pg.h"
#include "phases.h"
#include "resources.h"
#include "room.h"
#include "run.h"
#include "schema.h"
#include "table.h"

enum { EXIT_BAD_INPUT = 2 };

/* One line on stderr, in one write, even when it names a file whose name holds a
 * newline or a terminal escape: control characters show as '?'. */
static void say(const char *msg)
{
    char line[LD_OUTPUT_MAX + 512];
    size_t n = (size_t)snprintf(line, sizeof line - 1, "loomdist: %s", msg);
    n = n < sizeof line - 1 ? n : sizeof line - 2;
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)line[k] < 0x20 || line[k] == 0x7f)
            line[k] = '?';
    line[n] = '\n';
    fwrite(line, 1, n + 1, stderr);
}

/* Rank 0 says it once; every rank leaves with the same status. Every caller with a
 * non-zero status has the ranks' agreement that the run ends (each check and step
 * reduces its outcome over all ranks first), so no rank leaves while another still
 * works. The others wait until rank 0 has said it: a launcher that ends the job at
 * the first rank's exit (srun --kill-on-bad-exit) then cannot cut the line short. */
static int leave(int rank, int status, const char *msg)
{
    if (status != 0)
        ld_interrupt_ending();
    if (rank == 0 && msg)
        say(msg);
    fflush(stderr);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}

/* A temporary file left by an interrupted run is named and removed; anything else
 * there (a symbolic link someone planted in a shared folder, a folder) is left as it
 * is, and what a link points to is never opened. */
static int clear_leftover(const char *tmp, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(tmp, &st) != 0)
        return 0;
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen,
                 "%s is in the way of --output and is not a file a run left%s: "
                 "remove it or choose another --output",
                 tmp, S_ISLNK(st.st_mode) ? " (a symbolic link, left alone)" : "");
        return -1;
    }
    fprintf(stderr, "loomdist: replacing %s, left by an interrupted run\n", tmp);
    unlink(tmp);
    return 0;
}

/* Can the output be created, and does its disk have room for it? Tried for real on
 * rank 0, with the temporary name the writer will use, made as the writer makes it
 * (ld_h5_temp_create: a new file, never through a link), so "no such folder",
 * "read-only" and "disk full" all show before any work. */
static int check_output(const ld_options *o, int ranks, char *err, size_t errlen)
{
    const char *output = o->output;
    struct stat st;
    if (stat(output, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "--output %s is a folder; give a file name", output);
        return -1;
    }
    char tmp[LD_OUTPUT_MAX + 8];
    ld_h5_temp_name(output, tmp, sizeof tmp);
    if (clear_leftover(tmp, err, errlen) != 0)
        return -1;
    int rc = ld_h5_temp_create(tmp);
    if (rc != 0) {
        snprintf(err, errlen, "cannot write --output %s: %s", output, strerror(-rc));
        return -1;
    }
    unlink(tmp);
    return ld_room_disk(o, ld_room_output_bytes(o, ranks), err, errlen);
}

/* Whether a selected job's tasks are trades, so that every rank needs one. */
static int runs_trades(const ld_options *o)
{
    for (size_t j = 0; j < ld_njobs; j++)
        if (o->selected[j] && !ld_jobs[j]->tasks)
            return 1;
    return 0;
}

/* Checks beyond the options themselves, all before the book: the rank count against
 * the trades of jobs that run them, the output file (by a plain file on rank 0 for a
 * precise message, then as parallel HDF5 creates it), the address space the stacks
 * need, the memory the tasks need, and each memory limit against its floor. */
static int check_run(MPI_Comm comm, const ld_options *o, char *err, size_t errlen)
{
    int rank, size, ok = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if ((uint64_t)size > o->trades && runs_trades(o)) {
        snprintf(err, errlen, "%d ranks but only %llu trades: use --trades %d or more",
                 size, (unsigned long long)o->trades, size);
        return -1;
    }
    if (rank == 0)
        ok = check_output(o, size, err, errlen) == 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (!ok || ld_h5_probe(comm, o->output, err, errlen) != 0)
        return -1;
    if (ld_room_stacks(comm, o, err, errlen) != 0 ||
        ld_resources_check(comm, o, err, errlen) != 0)
        return -1;
    return ld_resources_limits(comm, o, err, errlen);
}

/* The disk may have filled up during the run: look again before the write, since
 * parallel HDF5 can crash or hang on a write refused for want of space. Rank 0 looks
 * once it has printed the tables; the reduction that tells every rank is the meeting
 * that ends the gather, so the write starts with the ranks together. */
static int room_to_write(MPI_Comm comm, const ld_options *o)
{
    int rank, size, ok = 1;
    char err[LD_OUTPUT_MAX + 256];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0 &&
        ld_room_disk(o, ld_room_output_bytes(o, size), err, sizeof err) != 0) {
        say(err);
        ok = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    return ok ? 0 : -1;
}

/* The command line as the results file keeps it, which anyone who can read the file
 * sees: a word that holds a URL or a password= (--db-url's value, however the option
 * was spelled) has its user information and password masked, as messages show it. */
static void join_argv(int argc, char **argv, char *out, size_t len)
{
    char shown[4096]; /* a word, as long as the whole line may be */

    out[0] = '\0';
    for (int i = 0; i < argc; i++) {
        ld_pg_word_mask(argv[i], shown, sizeof shown);
        if (i)
            strncat(out, " ", len - strlen(out) - 1);
        strncat(out, shown, len - strlen(out) - 1);
    }
}

/* Rank 0's clock names the run; everyone writes the same date attribute. */
static void run_date(MPI_Comm comm, char *out, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    MPI_Bcast(out, (int)len, MPI_CHAR, 0, comm);
}

/* What runs, on what: each selected job with its first option, its headline. */
static void say_setup(const ld_options *o, const ld_node *node, int size)
{
    if (o->quiet)
        return;
    fprintf(stderr, "loomdist %s: %d rank(s) on %d node(s), %llu trades", LD_VERSION,
            size, node->nodes, (unsigned long long)o->trades);
    for (size_t j = 0; j < ld_njobs; j++) {
        const ld_job *job = ld_jobs[j];
        if (!o->selected[j])
            continue;
        fprintf(stderr, ", %s", job->name);
        if (job->nopts && job->opts[0].type != LD_OPT_CHOICE)
            fprintf(stderr, " %s %g", job->opts[0].name,
                    ld_opt_value(&job->opts[0], o->job_config[j]));
    }
    fprintf(stderr, ", rank 0 has %u CPU(s)\n", node->cpus.n);
}

/* Ranks that share CPUs are oversubscribed: say so, since it changes every number. */
static void say_oversubscribed(MPI_Comm comm, const ld_node *node, int rank)
{
    int over = node->oversubscribed;
    MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, comm);
    if (over && rank == 0)
        fprintf(stderr,
                "loomdist: note: ranks outnumber CPUs on a node (%d ranks per "
                "node); ranks share CPUs and are oversubscribed\n",
                node->ranks_per_node);
    int idle = node->launcher_idle_cpus;
    MPI_Allreduce(MPI_IN_PLACE, &idle, 1, MPI_INT, MPI_MAX, comm);
    if (idle && rank == 0)
        fprintf(stderr,
                "loomdist: note: the launcher's binding leaves %d CPU(s) of a node "
                "unused (rank 0 has %u); to give ranks the whole node use "
                "mpirun --bind-to none, or srun -c N\n",
                idle, node->cpus.n);
}

/* Ranges: rank 0 scatters the ranges, then every rank builds its own trades, which
 * is the book's phase. */
static int deal_ranges(MPI_Comm comm, const ld_options *o, ld_share *share, ld_phases *ph)
{
    int rc = ld_partition_ranges(comm, o, share);
    ld_phases_end(ph, LD_PHASE_SCATTER);
    if (rc == 0)
        ld_partition_build(o, share);
    ld_phases_end(ph, LD_PHASE_BOOK);
    return rc;
}

/* Rank 0 builds the book and every rank takes its share, each step a phase. */
static int deal(MPI_Comm comm, const ld_options *o, ld_share *share, ld_phases *ph)
{
    if (o->partition == LD_PARTITION_RANGES)
        return deal_ranges(comm, o, share, ph);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ld_trade *book = rank == 0 ? ld_partition_book(o, size) : NULL;
    /* The other ranks' wait for rank 0's book is the book's time, not the scatter's. */
    MPI_Barrier(comm);
    ld_phases_end(ph, LD_PHASE_BOOK);
    int rc = ld_partition_scatter(comm, o, book, share);
    free(book);
    ld_phases_end(ph, LD_PHASE_SCATTER);
    return rc;
}

/* Every strategy, with the untimed set-up among them counted as prepare. */
static int run_strategies(MPI_Comm comm, const ld_options *o, const ld_node *node,
                          const ld_share *share, ld_run *results, ld_phases *ph)
{
    int rc = ld_run_all(comm, o, node, share, results);
    ld_phases_end(ph, LD_PHASE_STRATEGIES);
    ph->ns[LD_PHASE_STRATEGIES] -= results->prepare_ns;
    ph->ns[LD_PHASE_PREPARE] += results->prepare_ns;
    return rc;
}

static int run(MPI_Comm comm, const ld_options *o, int argc, char **argv, ld_phases *ph)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ld_node node;
    ld_share share = {0};
    ld_run results = {0};
    char date[32], cmdline[4096];
    ld_cpuinfo cpu;
    if (ld_node_discover(comm, &node) != 0) /* agreed by every rank */
        return leave(rank, 1, "could not discover the node's CPUs");
    if (rank == 0)
        say_setup(o, &node, size);
    say_oversubscribed(comm, &node, rank);
    run_date(comm, date, sizeof date);
    ld_cpuinfo_of_rank0(comm, &cpu);
    join_argv(argc, argv, cmdline, sizeof cmdline);
    /* The ranks leave the checks together: a rank's late arrival is the checks' time,
     * not that of the first step that waits for it (under ranges, the scatter). */
    MPI_Barrier(comm);
    ld_phases_end(ph, LD_PHASE_CHECKS);
    if (deal(comm, o, &share, ph) != 0)
        return leave(rank, 1, "out of memory building or scattering the book");
    int rc = run_strategies(comm, o, &node, &share, &results, ph);
    if (rc == 0) {
        ld_table_print(comm, o, &share, &results, stdout);
        /* Rank 0 prints while the others wait: that is the gather's, not the write's. */
        rc = room_to_write(comm, o);
        ld_phases_end(ph, LD_PHASE_GATHER);
        ld_h5_context ctx = {.o = o,
                             .node = &node,
                             .share = &share,
                             .run = &results,
                             .phases = ph,
                             .command_line = cmdline,
                             .date = date,
                             .cpu = &cpu};
        if (rc == 0)
            rc = ld_h5_write(comm, &ctx);
        if (rc == 0) {
            ld_interrupt_written();
            ld_table_phases(comm, o, ph, stderr);
        }
        if (rc == 0 && rank == 0 && !o->quiet)
            fprintf(stderr, "loomdist: wrote %s\n", o->output);
    }
    ld_run_free(&results);
    ld_share_free(&share);
    return leave(rank, rc == 0 ? 0 : 1,
                 rc == 0 ? NULL : "the run failed; no results file");
}

int main(int argc, char **argv)
{
    ld_phases ph;
    ld_phases_start(&ph, ld_phases_now());
    ld_ompi_env_defaults();
    MPI_Init(&argc, &argv);
    /* A pipe or socket whose reader has gone is an error code to the call that wrote to
     * it (the HTTP clients and servers of a job; rank 0's stderr once srun has ended
     * the step), never the death of the rank with its exit status lost. */
    signal(SIGPIPE, SIG_IGN);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ld_options o;
    char err[LD_OUTPUT_MAX + 256];
    switch (ld_options_parse(&o, argc, argv, err, sizeof err)) {
    case LD_OPTIONS_HELP:
        if (rank == 0)
            ld_options_usage(stdout);
        return leave(rank, 0, NULL);
    case LD_OPTIONS_VERSION:
        if (rank == 0)
            ld_options_version(stdout);
        return leave(rank, 0, NULL);
    case LD_OPTIONS_SCHEMA:
        if (rank == 0)
            ld_schema_print(stdout);
        return leave(rank, 0, NULL);
    case LD_OPTIONS_INVALID:
        return leave(rank, EXIT_BAD_INPUT, err);
    case LD_OPTIONS_RUN:
        break;
    }
    o.rank = rank;
    ld_phases_end(&ph, LD_PHASE_STARTUP);
    ld_interrupt_arm(rank, o.output);
    if (check_run(MPI_COMM_WORLD, &o, err, sizeof err) != 0)
        return leave(rank, EXIT_BAD_INPUT, err);
    return run(MPI_COMM_WORLD, &o, argc, argv, &ph);
}
