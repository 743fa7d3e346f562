/* node.h: which node each rank is on, and its share of that node's CPUs. */
#ifndef LD_NODE_H
#define LD_NODE_H

#include <mpi.h>

#include "cpus.h"

#define LD_NODE_NAME_MAX 64

typedef struct ld_node {
    char name[LD_NODE_NAME_MAX]; /* SLURMD_NODENAME where set, else the host name */
    int nodes;                   /* distinct node names across all ranks */
    int local_rank, local_size;  /* this rank among the ranks of its node */
    int ranks_per_node;          /* the most ranks any node has */
    int oversubscribed;          /* 1 when this rank shares its CPUs with another */
    int launcher_idle_cpus; /* CPUs of the node that the launcher's binding left out */
    ld_cpus cpus;           /* the CPUs this rank owns */
} ld_node;

/* Collective over comm: name the node, find the ranks sharing it, split its CPUs, and
 * bind the calling (main) thread to this rank's share. */
int ld_node_discover(MPI_Comm comm, ld_node *node);

#endif
