/* partition.h: rank 0 builds the book and deals it out to the ranks. */
#ifndef LD_PARTITION_H
#define LD_PARTITION_H

#include <mpi.h>

#include "book.h"
#include "options.h"

typedef struct ld_share {
    ld_trade *trades; /* this rank's trades, owned */
    size_t n;
    uint64_t offset; /* where this rank's rows start in the file's per-trade datasets */
} ld_share;

/* Collective: build the book on rank 0 from o->seed and scatter it by o->partition.
 * Block gives rank r a contiguous run of ids; cyclic gives it ids r, r+P, r+2P, ... */
int ld_partition_scatter(MPI_Comm comm, const ld_options *o, ld_share *share);

void ld_share_free(ld_share *share);

#endif
