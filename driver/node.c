/* node.c: node identity and the CPU split between the ranks of one node.
 *
 * Nodes are told apart by name, not by shared memory, so emulated Slurm nodes on one
 * host count as the distinct nodes Slurm says they are. A launcher that already bound
 * each rank to its own CPUs (srun --cpu-bind, mpirun --bind-to core) is obeyed; when
 * the ranks of a node all see the same CPUs, they split them in contiguous blocks.
 */
#include "node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void node_name(char *out)
{
    const char *slurm = getenv("SLURMD_NODENAME");
    if (slurm && *slurm)
        snprintf(out, LD_NODE_NAME_MAX, "%s", slurm);
    else if (gethostname(out, LD_NODE_NAME_MAX) != 0)
        snprintf(out, LD_NODE_NAME_MAX, "unknown");
    out[LD_NODE_NAME_MAX - 1] = '\0';
}

/* Number the distinct names in rank order; this rank's node is the index of its name. */
static int count_nodes(const char *names, int size, int rank, int *my_node)
{
    int nodes = 0;
    int *first = malloc((size_t)size * sizeof *first);
    if (!first)
        return -1;
    for (int r = 0; r < size; r++) {
        int k = 0;
        while (k < nodes && strcmp(names + (size_t)first[k] * LD_NODE_NAME_MAX,
                                   names + (size_t)r * LD_NODE_NAME_MAX) != 0)
            k++;
        if (k == nodes)
            first[nodes++] = r;
        if (r == rank)
            *my_node = k;
    }
    free(first);
    return nodes;
}

typedef struct cpu_mask {
    unsigned char bit[LD_CPUS_MAX / 8];
} cpu_mask;

static void to_mask(const ld_cpus *c, cpu_mask *m)
{
    memset(m, 0, sizeof *m);
    for (unsigned i = 0; i < c->n; i++)
        m->bit[c->id[i] / 8] |= (unsigned char)(1u << (c->id[i] % 8));
}

/* Split the node's CPUs unless the launcher already gave each rank its own. The node's
 * ranks agree first that each could read its CPUs, so none waits in the gather for a
 * rank that failed. */
static int split_cpus(MPI_Comm local, ld_node *node)
{
    ld_cpus mine;
    int rc = ld_cpus_current(&mine);
    cpu_mask m, *all = malloc((size_t)node->local_size * sizeof *all);
    int ok = rc == 0 && all;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, local);
    if (!ok) {
        free(all);
        return rc ? rc : -1;
    }
    to_mask(&mine, &m);
    MPI_Allgather(&m, sizeof m, MPI_BYTE, all, sizeof m, MPI_BYTE, local);
    int overlap = 0;
    ld_cpus uni = {0};
    for (int cpu = 0; cpu < LD_CPUS_MAX; cpu++) {
        int holders = 0;
        for (int r = 0; r < node->local_size; r++)
            holders += (all[r].bit[cpu / 8] >> (cpu % 8)) & 1;
        overlap |= holders > 1;
        if (holders)
            uni.id[uni.n++] = cpu;
    }
    free(all);
    if (!overlap) {
        /* The launcher bound each rank: obey it, but count what it left unused, since
         * mpirun's default binding gives one rank one core whatever the node has. */
        ld_cpus allowed;
        if (ld_cpus_allowed(&allowed) == 0 && allowed.n > uni.n)
            node->launcher_idle_cpus = (int)(allowed.n - uni.n);
        node->cpus = mine;
        return 0;
    }
    rc = ld_cpus_share(&uni, (unsigned)node->local_rank, (unsigned)node->local_size,
                       &node->cpus);
    if (rc < 0)
        return rc;
    node->oversubscribed = rc == 1;
    return ld_cpus_bind_self(&node->cpus);
}

int ld_node_discover(MPI_Comm comm, ld_node *node)
{
    int rank, size, my_node = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(node, 0, sizeof *node);
    node_name(node->name);
    char *names = malloc((size_t)size * LD_NODE_NAME_MAX);
    int ok = names != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (!ok || !names) { /* the same on every rank: names is NULL only where ok was 0 */
        free(names);
        return -1;
    }
    MPI_Allgather(node->name, LD_NODE_NAME_MAX, MPI_CHAR, names, LD_NODE_NAME_MAX,
                  MPI_CHAR, comm);
    node->nodes = count_nodes(names, size, rank, &my_node);
    free(names);
    MPI_Comm local;
    MPI_Comm_split(comm, my_node, rank, &local);
    MPI_Comm_rank(local, &node->local_rank);
    MPI_Comm_size(local, &node->local_size);
    MPI_Allreduce(&node->local_size, &node->ranks_per_node, 1, MPI_INT, MPI_MAX, comm);
    ok = node->nodes > 0 && split_cpus(local, node) == 0;
    MPI_Comm_free(&local);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    return ok ? 0 : -1;
}
