/* room.c: address space for the stacks, disk space for the results. */
#include "room.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gt.h"
#include "h5out.h"

/* A size for a message: "512 KiB", "3.2 MiB", "1.5 GiB". */
static const char *human(uint64_t bytes, char *out, size_t len)
{
    double b = (double)bytes;
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(out, len, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(out, len, "%.1f MiB", b / (1024.0 * 1024));
    else
        snprintf(out, len, "%.0f KiB", b / 1024.0);
    return out;
}

static uint64_t page_bytes(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (uint64_t)page : 4096u;
}

/* Room left under one limit, given what the process maps now; UINT64_MAX: no limit. */
static uint64_t under_limit(int resource, uint64_t used)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)rl.rlim_cur > used ? (uint64_t)rl.rlim_cur - used : 0;
}

/* The room ulimit -v (all mappings) and ulimit -d (private writable ones, stacks
 * included) leave now, and which of them leaves less. */
static uint64_t address_room(const char **limit)
{
    unsigned long long size = 0, resident, shared, text, lib, data = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu %llu %llu %llu %llu %llu", &size, &resident, &shared, &text,
                   &lib, &data) != 6)
            size = data = 0;
        fclose(f);
    }
    uint64_t as = under_limit(RLIMIT_AS, size * page_bytes());
    uint64_t ds = under_limit(RLIMIT_DATA, data * page_bytes());
    *limit = as <= ds ? "ulimit -v" : "ulimit -d";
    return as <= ds ? as : ds;
}

/* The most stacks a selected strategy of job j needs for the rank's tasks under cfg. */
static uint64_t job_stacks(const ld_options *o, size_t j, const ld_job_config *cfg,
                           uint64_t tasks)
{
    const ld_job *job = ld_jobs[j];
    uint64_t most = 0;
    for (size_t s = 0; s < job->nstrategies; s++) {
        uint64_t n = o->selected[j] >> s & 1u
                         ? ld_job_stacks(job, cfg, &job->strategies[s], tasks)
                         : 0;
        most = n > most ? n : most;
    }
    return most;
}

/* Whether job j's stacks (in copy mode, their chunks) for the rank's tasks fit in
 * room, with a tenth to spare for everything else a run maps; if not, said in err,
 * naming the option that sets the tasks: more ranks share trades, not a job's own
 * tasks, which are per rank. */
static int job_fits(const ld_options *o, size_t j, const ld_job_config *cfg,
                    uint64_t trades, uint64_t room, const char *limit, char *err,
                    size_t errlen)
{
    const ld_job *job = ld_jobs[j];
    uint64_t tasks = ld_job_tasks(job, cfg, trades);
    uint64_t n = job_stacks(o, j, cfg, tasks), each = ld_job_stack_bytes(cfg);
    uint64_t need = n * each;
    if ((double)need <= 0.9 * (double)room)
        return 1;
    int copy = cfg->stack_mode == LD_STACK_COPY;
    char a[32], b[32], what[64];
    if (copy)
        snprintf(what, sizeof what, "chunks of %llu bytes", (unsigned long long)each);
    else
        snprintf(what, sizeof what, "stacks of %llu KiB",
                 (unsigned long long)o->stack_kib);
    snprintf(err, errlen,
             "rank %d needs %s of address space for %llu green-thread %s, but %s leaves "
             "it %s: use %sfewer --%s%s",
             o->rank, human(need, a, sizeof a), (unsigned long long)n, what, limit,
             human(room, b, sizeof b), job->tasks ? "" : "more ranks or ",
             ld_job_tasks_option(job),
             copy ? "" : ", a smaller --stack-size or --stack-mode copy");
    return 0;
}

/* This rank's check: each selected job's stacks against its limits. */
static int stacks_fit(const ld_options *o, int rank, int size, char *err, size_t errlen)
{
    const char *limit;
    uint64_t room = address_room(&limit);
    uint64_t trades = ld_partition_count(o->trades, size, rank);
    ld_cpus cpus;
    if (room == UINT64_MAX)
        return 1;
    if (ld_cpus_current(&cpus) != 0)
        cpus = (ld_cpus){.n = 1};
    for (size_t j = 0; j < ld_njobs; j++) {
        ld_job_config cfg;
        ld_options_job_config(o, j, &cpus, &cfg);
        cfg.ranks = size;
        if (o->selected[j] && !job_fits(o, j, &cfg, trades, room, limit, err, errlen))
            return 0;
    }
    return 1;
}

int ld_room_stacks(MPI_Comm comm, const ld_options *o, char *err, size_t errlen)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int first_short = stacks_fit(o, rank, size, err, errlen) ? size : rank;
    MPI_Allreduce(MPI_IN_PLACE, &first_short, 1, MPI_INT, MPI_MIN, comm);
    if (first_short == size)
        return 0;
    MPI_Bcast(err, (int)errlen, MPI_CHAR, first_short, comm);
    return -1;
}

/* Per trade in /trades: its row (h5out.h); per trade and strategy: the job's
 * declared columns; per iteration, rank and strategy: the metrics, percentiles and
 * figures, a few dozen values. HDF5's object headers, heaps and B-trees come on top,
 * a few KiB per group and dataset, and a quarter more covers what the estimate
 * misses. */
uint64_t ld_room_output_bytes(const ld_options *o, int ranks)
{
    uint64_t bytes = 32768 + (uint64_t)ranks * 128 + o->trades * LD_H5_TRADE_ROW_BYTES;
    for (size_t j = 0; j < ld_njobs; j++) {
        uint64_t per_trade = ld_job_row_bytes(ld_jobs[j]);
        for (size_t s = 0; s < ld_jobs[j]->nstrategies; s++)
            if (o->selected[j] >> s & 1u)
                bytes += 8192 + o->trades * per_trade +
                         (uint64_t)o->iterations * (uint64_t)ranks * 32 * 8;
    }
    return bytes + bytes / 4;
}

/* The folder part of a path: "." for a bare name, "/" for a file at the root. */
static void folder_of(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s", path);
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, len, ".");
    else if (slash == out)
        out[1] = '\0';
    else
        *slash = '\0';
}

int ld_room_disk(const ld_options *o, uint64_t need, char *err, size_t errlen)
{
    char dir[LD_OUTPUT_MAX];
    struct statvfs st;
    folder_of(o->output, dir, sizeof dir);
    if (statvfs(dir, &st) != 0)
        return 0;
    uint64_t avail = (uint64_t)st.f_bavail * st.f_frsize;
    if (need <= avail)
        return 0;
    char a[32], b[32];
    snprintf(err, errlen,
             "cannot write --output %s: its disk has %s free, and the results need "
             "about %s",
             o->output, human(avail, a, sizeof a), human(need, b, sizeof b));
    return -1;
}
