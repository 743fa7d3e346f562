/* partition.h: the book dealt out to the ranks, in one of two ways. Block and cyclic:
 * rank 0 builds the whole book and scatters the trades. Ranges: rank 0 scatters only
 * each rank's (first id, count), and each rank builds its own trades, which depend on
 * (seed, id) alone, so a rank holds the same trades, in the same rows, as under block. */
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
 * run of ids, cyclic gives it ids r, r+P, r+2P, ... NULL when out of memory. Not for
 * ranges, which has no book on rank 0. */
/* How many of n trades rank r of size gets: the first n % size ranks get one more,
 * under either partition. The checks size a rank's work by it before any book. */
size_t ld_partition_count(uint64_t n, int size, int r);

ld_trade *ld_partition_book(const ld_options *o, int size);

/* Collective: scatter rank 0's book (NULL on the other ranks, and on rank 0 when it
 * could not be built, which fails every rank) into each rank's share. The caller
 * frees the book. */
int ld_partition_scatter(MPI_Comm comm, const ld_options *o, const ld_trade *book,
                         ld_share *share);

/* Collective, for ranges: rank 0 scatters each rank its (first id, count), block's
 * counts, into share->offset and share->n, and every rank allocates share->trades.
 * Fails on every rank when one could not allocate. */
int ld_partition_ranges(MPI_Comm comm, const ld_options *o, ld_share *share);

/* This rank's own trades of its range, after ld_partition_ranges: the rows block's
 * Scatterv would have brought, made from their ids alone. */
void ld_partition_build(const ld_options *o, ld_share *share);

void ld_share_free(ld_share *share);

/* The committed MPI datatype of one ld_trade, named field by field and resized to the
 * struct so that arrays of it work whatever the padding; the caller frees it. */
MPI_Datatype ld_partition_trade_type(void);

#endif
