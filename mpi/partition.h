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

/* Rank 0's book from o->seed for `size` ranks, in rank-major order by o->partition so
 * that rank r's trades are contiguous for Scatterv: block gives rank r a contiguous
 * run of ids, cyclic gives it ids r, r+P, r+2P, ... NULL when out of memory. */
ld_trade *ld_partition_book(const ld_options *o, int size);

/* Collective: scatter rank 0's book (NULL on the other ranks, and on rank 0 when it
 * could not be built, which fails every rank) into each rank's share. The caller
 * frees the book. */
int ld_partition_scatter(MPI_Comm comm, const ld_options *o, const ld_trade *book,
                         ld_share *share);

void ld_share_free(ld_share *share);

/* The committed MPI datatype of one ld_trade, named field by field and resized to the
 * struct so that arrays of it work whatever the padding; the caller frees it. */
MPI_Datatype ld_partition_trade_type(void);

#endif
