/* partition.c: the book, built once on rank 0 and scattered with MPI_Scatterv, or
 * built by every rank from the range rank 0 scatters to it.
 *
 * A trade travels as one element of a derived datatype that names its fields, so the
 * transfer is correct whatever the struct's padding. */
#include "partition.h"

#include <stdlib.h>

MPI_Datatype ld_partition_trade_type(void)
{
    int lengths[] = {1, 1, 1, 1, 1, LD_SYMBOL_LEN};
    MPI_Aint displs[] = {offsetof(ld_trade, id),       offsetof(ld_trade, price_cents),
                         offsetof(ld_trade, quantity), offsetof(ld_trade, counterparty),
                         offsetof(ld_trade, side),     offsetof(ld_trade, symbol)};
    MPI_Datatype types[] = {MPI_UINT64_T, MPI_INT64_T, MPI_UINT32_T,
                            MPI_UINT32_T, MPI_UINT8_T, MPI_CHAR};
    MPI_Datatype fields, trade;
    MPI_Type_create_struct(6, lengths, displs, types, &fields);
    MPI_Type_create_resized(fields, 0, sizeof(ld_trade), &trade);
    MPI_Type_free(&fields);
    MPI_Type_commit(&trade);
    return trade;
}

size_t ld_partition_count(uint64_t n, int size, int r)
{
    return (size_t)(n / (uint64_t)size + ((uint64_t)r < n % (uint64_t)size));
}

ld_trade *ld_partition_book(const ld_options *o, int size)
{
    ld_trade *book = malloc(o->trades * sizeof *book);
    if (!book)
        return NULL;
    if (o->partition == LD_PARTITION_BLOCK) {
        ld_book_make(book, o->trades, 0, o->seed);
        return book;
    }
    size_t at = 0;
    for (int r = 0; r < size; r++)
        for (uint64_t id = (uint64_t)r; id < o->trades; id += (uint64_t)size)
            ld_book_make(&book[at++], 1, id, o->seed);
    return book;
}

int ld_partition_scatter(MPI_Comm comm, const ld_options *o, const ld_trade *book,
                         ld_share *share)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *counts = malloc((size_t)size * sizeof *counts);
    int *displs = malloc((size_t)size * sizeof *displs);
    share->n = ld_partition_count(o->trades, size, rank);
    share->trades = malloc((share->n ? share->n : 1) * sizeof *share->trades);
    int ok = counts && displs && share->trades && (rank != 0 || book);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (ok && counts && displs) {
        uint64_t at = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = (int)ld_partition_count(o->trades, size, r);
            displs[r] = (int)at;
            if (r == rank)
                share->offset = at;
            at += (uint64_t)counts[r];
        }
        MPI_Datatype trade = ld_partition_trade_type();
        MPI_Scatterv(book, counts, displs, trade, share->trades, (int)share->n, trade, 0,
                     comm);
        MPI_Type_free(&trade);
    }
    free(counts);
    free(displs);
    return ok ? 0 : -1;
}

int ld_partition_ranges(MPI_Comm comm, const ld_options *o, ld_share *share)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint64_t *ranges = rank == 0 ? malloc(2 * (size_t)size * sizeof *ranges) : NULL;
    uint64_t mine[2] = {0, 0}, at = 0;
    int ok = rank != 0 || ranges;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (!ok) {
        free(ranges);
        return -1;
    }
    for (int r = 0; rank == 0 && r < size; r++) {
        ranges[2 * r] = at;
        ranges[2 * r + 1] = ld_partition_count(o->trades, size, r);
        at += ranges[2 * r + 1];
    }
    MPI_Scatter(ranges, 2, MPI_UINT64_T, mine, 2, MPI_UINT64_T, 0, comm);
    free(ranges);
    share->offset = mine[0];
    share->n = (size_t)mine[1];
    share->trades = malloc((share->n ? share->n : 1) * sizeof *share->trades);
    ok = share->trades != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    return ok ? 0 : -1;
}

void ld_partition_build(const ld_options *o, ld_share *share)
{
    ld_book_make(share->trades, share->n, share->offset, o->seed);
}

void ld_share_free(ld_share *share)
{
    free(share->trades);
    share->trades = NULL;
}
