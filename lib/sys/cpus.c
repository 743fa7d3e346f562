/* cpus.c: the process's CPUs (from hwloc), a rank's share of them, and pinning.
 *
 * Reading the process binding goes through hwloc, which unites the masks of all the
 * process's threads. hwloc needs a topology for that, and loading one reads sysfs for
 * milliseconds, so the topology here is cut down to the bare PUs and is only loaded
 * for ld_cpus_current, once per run. Pinning or binding a thread is one system call
 * and goes to the kernel directly, so that N pinned workers do not load N
 * topologies.
 */
#include "cpus.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include <hwloc.h>

/* hwloc reports failure as -1 and errno, which it does not always set. */
static int cpus_hwloc_error(void)
{
    return errno > 0 ? -errno : -EIO;
}

/* A topology that knows the PUs and nothing else: no caches, cores, NUMA or I/O. */
static int cpus_topology(hwloc_topology_t *topo)
{
    errno = 0;
    if (hwloc_topology_init(topo) != 0)
        return cpus_hwloc_error();
    if (hwloc_topology_set_all_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE) != 0 ||
        hwloc_topology_load(*topo) != 0) {
        int rc = cpus_hwloc_error();
        hwloc_topology_destroy(*topo);
        return rc;
    }
    return 0;
}

/* Copy a bitmap's indexes into out, ascending; -E2BIG past LD_CPUS_MAX. */
static int cpus_from_bitmap(hwloc_const_bitmap_t set, ld_cpus *out)
{
    unsigned n = 0;
    int id;
    hwloc_bitmap_foreach_begin(id, set)
    {
        if (n == LD_CPUS_MAX)
            return -E2BIG;
        out->id[n++] = id;
    }
    hwloc_bitmap_foreach_end();
    out->n = n;
    return n > 0 ? 0 : -ENOENT;
}

int ld_cpus_current(ld_cpus *out)
{
    hwloc_topology_t topo;
    int rc = cpus_topology(&topo);
    if (rc != 0)
        return rc;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == NULL) {
        rc = -ENOMEM;
    } else if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0) {
        rc = cpus_hwloc_error();
    } else {
        rc = cpus_from_bitmap(set, out);
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
}

int ld_cpus_allowed(ld_cpus *out)
{
    hwloc_topology_t topo;
    int rc = cpus_topology(&topo);
    if (rc != 0)
        return rc;
    rc = cpus_from_bitmap(hwloc_topology_get_allowed_cpuset(topo), out);
    hwloc_topology_destroy(topo);
    return rc;
}

/* Contiguous blocks, the first n % local ranks one CPU larger: rank r starts after the
 * r blocks before it. With more ranks than CPUs each rank gets one CPU, round-robin. */
int ld_cpus_share(const ld_cpus *node, unsigned local_rank, unsigned local, ld_cpus *out)
{
    if (node == NULL || out == NULL || node->n == 0 || node->n > LD_CPUS_MAX ||
        local == 0 || local_rank >= local)
        return -EINVAL;
    if (local > node->n) {
        out->n = 1;
        out->id[0] = node->id[local_rank % node->n];
        return 1;
    }
    unsigned base = node->n / local, extra = node->n % local;
    unsigned first = local_rank * base + (local_rank < extra ? local_rank : extra);
    out->n = base + (local_rank < extra ? 1u : 0u);
    for (unsigned i = 0; i < out->n; i++)
        out->id[i] = node->id[first + i];
    return 0;
}

/* Set the calling thread's affinity to cpus[0..n), with a mask sized for the largest
 * CPU number, so that any number works. */
static int cpus_set_affinity(const int *cpus, unsigned n)
{
    int top = -1;
    for (unsigned i = 0; i < n; i++) {
        if (cpus[i] < 0)
            return -EINVAL;
        top = cpus[i] > top ? cpus[i] : top;
    }
    if (top < 0)
        return -EINVAL;
    cpu_set_t *mask = CPU_ALLOC((size_t)top + 1);
    if (mask == NULL)
        return -ENOMEM;
    size_t size = CPU_ALLOC_SIZE((size_t)top + 1);
    CPU_ZERO_S(size, mask);
    for (unsigned i = 0; i < n; i++)
        CPU_SET_S((size_t)cpus[i], size, mask);
    int rc = pthread_setaffinity_np(pthread_self(), size, mask);
    CPU_FREE(mask);
    return -rc;
}

int ld_cpus_pin_self(int cpu)
{
    return cpus_set_affinity(&cpu, 1);
}

int ld_cpus_bind_self(const ld_cpus *cpus)
{
    if (cpus == NULL || cpus->n > LD_CPUS_MAX)
        return -EINVAL;
    return cpus_set_affinity(cpus->id, cpus->n);
}

int ld_cpus_running_on(void)
{
    int cpu = sched_getcpu();
    return cpu >= 0 ? cpu : -errno;
}

/* The version of the hwloc headers this was built against; Debian keeps the library
 * of the same package version. */
const char *ld_cpus_hwloc_version(void)
{
    return HWLOC_VERSION;
}
