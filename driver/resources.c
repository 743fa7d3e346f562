/* resources.c: the memory check made before a run. */
#include "resources.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cpus.h"
#include "partition.h"

/* A number from a one-line file such as /proc/sys/vm/max_map_count, or -1. */
static long long read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (!f)
        return -1;
    if (fscanf(f, "%lld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

long ld_resources_max_map_count(void)
{
    return (long)read_number("/proc/sys/vm/max_map_count");
}

/* MemAvailable in bytes, or -1. */
static long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    long long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

/* What the cgroup (v2) still lets this process take, or -1 when it sets no limit. */
static long long cgroup_room(void)
{
    long long max = read_number("/sys/fs/cgroup/memory.max");
    long long cur = read_number("/sys/fs/cgroup/memory.current");
    if (max < 0 || cur < 0)
        return -1;
    return max > cur ? max - cur : 0;
}

/* What each selected job needs on this rank, under the CPUs it may use, for its
 * tasks, in need[j] (0 for the others), and the tasks in tasks[j]. */
static void rank_needs(const ld_options *o, const ld_cpus *cpus, size_t trades,
                       unsigned long long *need, unsigned long long *tasks)
{
    for (size_t j = 0; j < ld_njobs; j++) {
        need[j] = tasks[j] = 0;
        if (!o->selected[j])
            continue;
        ld_job_config cfg;
        ld_options_job_config(o, j, cpus, &cfg);
        tasks[j] = ld_job_tasks(ld_jobs[j], &cfg, trades);
        if (ld_jobs[j]->resident_bytes)
            need[j] = ld_jobs[j]->resident_bytes(&cfg, (size_t)tasks[j]);
    }
}

/* The message for job j's need past the room, naming the option that sets its tasks:
 * trades are the run's and shared by the ranks, a job's own tasks are per rank. */
static void say_short(const ld_options *o, int ranks_per_node, size_t j,
                      unsigned long long need, unsigned long long tasks,
                      const char *limit, long long room, char *err, size_t errlen)
{
    const ld_job *job = ld_jobs[j];
    double per_node = (double)need * ranks_per_node / (1u << 30);
    if (!job->tasks)
        snprintf(err, errlen,
                 "--trades %llu needs about %.1f GiB of memory per node (%.1f GiB per "
                 "rank, %d rank(s) per node) but %s leaves %.1f GiB; use fewer trades, "
                 "more nodes, or fewer ranks per node",
                 (unsigned long long)o->trades, per_node, (double)need / (1u << 30),
                 ranks_per_node, limit, (double)room / (1u << 30));
    else
        snprintf(err, errlen,
                 "--%s %llu (%s, per rank) needs about %.1f GiB of memory per node (%.1f "
                 "GiB per rank, %d rank(s) per node) but %s leaves %.1f GiB; use fewer "
                 "--%s, more nodes, or fewer ranks per node",
                 job->tasks_option, tasks, job->name, per_node, (double)need / (1u << 30),
                 ranks_per_node, limit, (double)room / (1u << 30), job->tasks_option);
}

/* The CPUs this rank may use, as the jobs will size their threads by them; one when
 * they cannot be read. */
static void rank_cpus(ld_cpus *out)
{
    if (ld_cpus_current(out) != 0)
        *out = (ld_cpus){.n = 1};
}

/* The ranks that share this rank's node. */
static int node_ranks(MPI_Comm comm)
{
    MPI_Comm node;
    int n = 1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return 1;
    MPI_Comm_size(node, &n);
    MPI_Comm_free(&node);
    return n;
}

/* Every rank reaches the same verdict from the same reduced numbers: each job's
 * largest rank's need times the ranks on a node, against the smallest room any rank
 * sees; the heaviest job is the one checked and named. */
int ld_resources_check(MPI_Comm comm, const ld_options *o, char *err, size_t errlen)
{
    unsigned long long need[LD_MAX_JOBS] = {0}, tasks[LD_MAX_JOBS] = {0};
    int rank, size, ranks_per_node = node_ranks(comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ld_cpus cpus;
    rank_cpus(&cpus);
    rank_needs(o, &cpus, ld_partition_count(o->trades, size, rank), need, tasks);
    long long avail = mem_available(), room = cgroup_room();
    int from_cgroup = room >= 0 && (avail < 0 || room < avail);
    if (from_cgroup)
        avail = room;
    MPI_Allreduce(MPI_IN_PLACE, need, (int)ld_njobs, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                  comm);
    MPI_Allreduce(MPI_IN_PLACE, &from_cgroup, 1, MPI_INT, MPI_MAX, comm);
    long long min_avail = avail < 0 ? 0x7fffffffffffffffLL : avail;
    MPI_Allreduce(MPI_IN_PLACE, &min_avail, 1, MPI_LONG_LONG, MPI_MIN, comm);
    size_t heaviest = 0;
    for (size_t j = 1; j < ld_njobs; j++)
        heaviest = need[j] > need[heaviest] ? j : heaviest;
    unsigned long long node_need = need[heaviest] * (unsigned long long)ranks_per_node;
    if ((double)node_need <= 0.9 * (double)min_avail)
        return 0;
    say_short(o, ranks_per_node, heaviest, need[heaviest], tasks[heaviest],
              from_cgroup ? "the cgroup's memory.max" : "MemAvailable", min_avail, err,
              errlen);
    return -1;
}

/* Whether job j's limit is below the floor of its heaviest selected strategy, said in
 * err: the least limit that lets every one of them start. */
static int limit_short(const ld_options *o, size_t j, const ld_cpus *cpus, char *err,
                       size_t errlen)
{
    const ld_job *job = ld_jobs[j];
    ld_job_config cfg;
    ld_options_job_config(o, j, cpus, &cfg);
    uint64_t limit = 0, floor = 0;
    const ld_strategy *heaviest = NULL;
    char what[160] = "", w[160];
    for (size_t s = 0; s < job->nstrategies; s++) {
        if (!(o->selected[j] >> s & 1u))
            continue;
        uint64_t f = job->mem_floor(&cfg, &job->strategies[s], &limit, w, sizeof w);
        if (f > floor) {
            floor = f;
            heaviest = &job->strategies[s];
            memcpy(what, w, sizeof what);
        }
    }
    if (limit == 0 || limit >= floor)
        return 0;
    snprintf(err, errlen,
             "a memory limit of %" PRIu64 " bytes (--mem-limit, or --profile's) is "
             "below the %.2f MiB %s/%s needs before its first task (%s): give at least "
             "%" PRIu64 " bytes",
             limit, (double)floor / (1u << 20), job->name, heaviest->name, what, floor);
    return 1;
}

/* The most threads the kernel lets run at once, and which limit says so: pid_max
 * (each thread takes an id), threads-max, and this user's ulimit -u. */
static long long thread_ceiling(const char **which)
{
    long long ceiling = read_number("/proc/sys/kernel/pid_max");
    long long max = read_number("/proc/sys/kernel/threads-max");
    struct rlimit rl;
    *which = "kernel.pid_max";
    if (max > 0 && (ceiling < 0 || max < ceiling)) {
        ceiling = max;
        *which = "kernel.threads-max";
    }
    if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (ceiling < 0 || (long long)rl.rlim_cur < ceiling)) {
        ceiling = (long long)rl.rlim_cur;
        *which = "ulimit -u";
    }
    return ceiling;
}

/* Whether a selected strategy's OS threads, on every rank of this node at once, pass
 * what the kernel allows, said in err. */
static int threads_short(const ld_options *o, const ld_cpus *cpus, int local_ranks,
                         char *err, size_t errlen)
{
    const char *which;
    long long ceiling = thread_ceiling(&which);
    for (size_t j = 0; ceiling > 0 && j < ld_njobs; j++) {
        ld_job_config cfg;
        ld_options_job_config(o, j, cpus, &cfg);
        for (size_t s = 0; o->selected[j] && s < ld_jobs[j]->nstrategies; s++) {
            const ld_strategy *st = &ld_jobs[j]->strategies[s];
            long long need =
                (long long)ld_job_threads(ld_jobs[j], &cfg, st) * local_ranks;
            if (!(o->selected[j] >> s & 1u) || need <= ceiling)
                continue;
            snprintf(err, errlen,
                     "%s/%s needs %lld OS threads on this node (%d rank(s) on it), past "
                     "the %lld that %s allows: ask for fewer threads or ranks",
                     ld_jobs[j]->name, st->name, need, local_ranks, ceiling, which);
            return 1;
        }
    }
    return 0;
}

int ld_resources_limits(MPI_Comm comm, const ld_options *o, char *err, size_t errlen)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ld_cpus cpus;
    rank_cpus(&cpus);
    int short_here = threads_short(o, &cpus, node_ranks(comm), err, errlen);
    for (size_t j = 0; !short_here && j < ld_njobs; j++)
        if (o->selected[j] && ld_jobs[j]->mem_floor)
            short_here = limit_short(o, j, &cpus, err, errlen);
    int first_short = short_here ? rank : size;
    MPI_Allreduce(MPI_IN_PLACE, &first_short, 1, MPI_INT, MPI_MIN, comm);
    if (first_short == size)
        return 0;
    MPI_Bcast(err, (int)errlen, MPI_CHAR, first_short, comm);
    return -1;
}
