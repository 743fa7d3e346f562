/* skeleton.c: loomdist's distributed part, for SimGrid's SMPI (built with smpicc).
 *
 * What runs for real, from the driver's own files compiled a second time: rank 0
 * builds the book and deals it (driver/partition.c over lib/trade/book.c), or each rank
 * builds its range, timed on the host's clock and injected (run with
 * smpi/simulate-computation:no), and the phases are timed by driver/phases.c, whose
 * clock SMPI turns into simulated time. What is injected
 * as simulated compute (smpi_execute_flops: a host of 1 Gf takes 1 ns a flop), with
 * durations measured by real loomdist runs: each rank's
 * prepare and each strategy's iterations, in nanoseconds per trade the rank holds, and
 * the write's bytes at a measured rate. The communication follows the driver's: the
 * "ok" reductions after each step, a barrier and a reduction per iteration, the
 * table's reductions and the gather of every trade's percentile values to rank 0,
 * whose selection is injected, and per dataset of the write one collective step and the
 * node's slabs handed to its aggregator.
 *
 * The buffers that only carry bytes (the gathered values, the write's slabs) are
 * SMPI_SHARED_MALLOC: their contents never matter, and 1,024 ranks' own copies cost
 * real memory and page faults that SMPI would time as the ranks' compute.
 *
 * Rank 0 prints one line, "phase_ns name=v,v,... " per phase, one value per rank.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_clock.h"
#include "partition.h"
#include "phases.h"
#include "sim_options.h"

/* One percentile column as the table gathers it: an "ok", a Gather of counts and a
 * Gatherv of every trade's value to rank 0, which then selects its percentiles,
 * injected at the rate a one-rank run measured per trade. */
static void gather_column(MPI_Comm comm, const sim_options *s, const ld_share *share,
                          int rank, int size)
{
    int n = (int)share->n, ok = 1;
    int64_t *mine = SMPI_SHARED_MALLOC((share->n ? share->n : 1) * sizeof *mine);
    int *counts = rank == 0 ? malloc((size_t)size * sizeof *counts) : NULL;
    int *displs = rank == 0 ? malloc((size_t)size * sizeof *displs) : NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    int64_t total = 0;
    for (int r = 0; rank == 0 && r < size; r++) {
        displs[r] = (int)total;
        total += counts[r];
    }
    int64_t *all =
        rank == 0 ? SMPI_SHARED_MALLOC((size_t)(total ? total : 1) * sizeof *all) : NULL;
    MPI_Gatherv(mine, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0, comm);
    if (rank == 0)
        smpi_execute_flops(s->gather_ns * (double)total);
    if (all)
        SMPI_SHARED_FREE(all);
    free(counts);
    free(displs);
    SMPI_SHARED_FREE(mine);
}

/* What the table's reduce_row does per strategy: one "ok" and five reductions per
 * iteration, four for the means, one for the figures, then each percentile column. */
static void reduce_strategy(MPI_Comm comm, const sim_options *s, const ld_share *share,
                            int rank, int size)
{
    int ok = 1;
    double v = 1, out;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    for (unsigned k = 0; k < 5 * s->iterations + 5; k++)
        MPI_Reduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    for (unsigned c = 0; c < s->pct_columns; c++)
        gather_column(comm, s, share, rank, size);
}

/* One strategy's iterations as run.c runs them: barrier, the work, "ok", progress. */
static void run_strategy(MPI_Comm comm, const sim_options *s, unsigned warmup,
                         double fixed_ns, double ns_per_trade, const ld_share *share)
{
    for (unsigned it = 0; it < warmup + s->iterations; it++) {
        MPI_Barrier(comm);
        smpi_execute_flops(fixed_ns + ns_per_trade * (double)share->n);
        int ok = 1;
        int64_t wall = 0, max;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
        MPI_Reduce(&wall, &max, 1, MPI_INT64_T, MPI_MAX, 0, comm);
    }
}

/* The write as parallel HDF5 over MPI-IO's collective buffering makes it: per
 * dataset, one collective step for the metadata, then each node's ranks hand their
 * slab to the node's first rank, the aggregator, which writes the node's bytes at the
 * rate a one-rank run measured. Nodes that are one machine (--shared-disk) share its
 * page cache and disk: each aggregator's write of a dataset then ends when all the
 * dataset's bytes are in, as concurrent writers sharing one disk's rate do. */
static void write_file(MPI_Comm comm, const sim_options *s, const ld_share *share,
                       int rank)
{
    MPI_Comm node = MPI_COMM_SELF;
    if (s->ranks_per_node > 1)
        MPI_Comm_split(comm, rank / (int)s->ranks_per_node, rank, &node);
    int here, local;
    MPI_Comm_rank(node, &local);
    MPI_Comm_size(node, &here);
    int bytes = (int)(s->bytes_per_trade * (double)share->n / (double)s->datasets);
    char *slab = SMPI_SHARED_MALLOC((size_t)bytes + 1);
    char *agg =
        local == 0 ? SMPI_SHARED_MALLOC(((size_t)bytes + 1) * (size_t)here) : NULL;
    for (unsigned d = 0; d < s->datasets; d++) {
        int ok = 1, node_bytes = 0;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
        MPI_Gather(slab, bytes, MPI_CHAR, agg, bytes, MPI_CHAR, 0, node);
        MPI_Reduce(&bytes, &node_bytes, 1, MPI_INT, MPI_SUM, 0, node);
        double disk_bytes = s->shared_disk ? s->bytes_per_trade * (double)s->o.trades /
                                                 (double)s->datasets
                                           : (double)node_bytes;
        if (local == 0)
            smpi_execute_flops(disk_bytes * s->write_ns_per_byte);
    }
    int ok = 1;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (agg)
        SMPI_SHARED_FREE(agg);
    SMPI_SHARED_FREE(slab);
    if (node != MPI_COMM_SELF)
        MPI_Comm_free(&node);
}

/* Native work as long as it took on this machine, times the slowdown of ranks that
 * shared its cores when measured (1 otherwise). */
static void inject_since(const sim_options *s, int64_t start)
{
    smpi_execute_flops((double)(sim_host_ns() - start) * s->native_slowdown);
}

/* Block and cyclic as the driver deals them: rank 0's book, then the Scatterv. */
static int deal(MPI_Comm comm, const sim_options *s, ld_share *share, ld_phases *ph)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t start = sim_host_ns();
    ld_trade *book = rank == 0 ? ld_partition_book(&s->o, size) : NULL;
    inject_since(s, start);
    MPI_Barrier(comm);
    ld_phases_end(ph, LD_PHASE_BOOK);
    /* The real scatter costs rank 0 as much per trade whatever the rank counts: each
     * share, its own copied and the others sent one after another, moves at the rate
     * of a copy into memory not yet touched (the receivers' shares are new). So rank 0
     * pays every trade at the rate a one-rank run's scatter measured, and the links
     * then carry the messages (SMPI copies a rank's message to itself for free). The
     * transfer counted on top overstates the scatter by the link's time, small beside
     * the copy's where the link is fast. */
    if (rank == 0)
        smpi_execute_flops(s->copy_ns * (double)(s->o.trades * sizeof(ld_trade)));
    int rc = ld_partition_scatter(comm, &s->o, book, share);
    free(book);
    ld_phases_end(ph, LD_PHASE_SCATTER);
    return rc;
}

/* Ranges as the driver deals them: the ranges' scatter, then each rank's own build,
 * timed for real and injected as the book's phase. */
static int deal_ranges(MPI_Comm comm, const sim_options *s, ld_share *share,
                       ld_phases *ph)
{
    int rc = ld_partition_ranges(comm, &s->o, share);
    ld_phases_end(ph, LD_PHASE_SCATTER);
    int64_t start = sim_host_ns();
    if (rc == 0)
        ld_partition_build(&s->o, share);
    inject_since(s, start);
    ld_phases_end(ph, LD_PHASE_BOOK);
    return rc;
}

/* Rank 0 prints every rank's phases, one line per phase. */
static void print_phases(MPI_Comm comm, const ld_phases *ph, int rank, int size)
{
    int64_t *all = rank == 0 ? malloc((size_t)size * LD_PHASES * sizeof *all) : NULL;
    MPI_Gather(ph->ns, LD_PHASES, MPI_INT64_T, all, LD_PHASES, MPI_INT64_T, 0, comm);
    for (int k = 0; rank == 0 && k < LD_PHASES; k++) {
        printf("phase_ns %s=", ld_phase_names[k]);
        for (int r = 0; r < size; r++)
            printf("%s%lld", r ? "," : "", (long long)all[(size_t)r * LD_PHASES + k]);
        printf("\n");
    }
    free(all);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sim_options s;
    char err[256];
    if (sim_options_parse(&s, argc, argv, err, sizeof err) != 0) {
        if (rank == 0)
            fprintf(stderr, "loomdist-sim: %s\n", err);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm comm = MPI_COMM_WORLD;
    ld_phases ph;
    ld_phases_start(&ph, ld_phases_now());
    ld_share share = {0};
    int rc = s.o.partition == LD_PARTITION_RANGES ? deal_ranges(comm, &s, &share, &ph)
                                                  : deal(comm, &s, &share, &ph);
    if (rc == 0) {
        int ok = 1;
        smpi_execute_flops(s.prepare_ns * (double)share.n);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
        ld_phases_end(&ph, LD_PHASE_PREPARE);
        for (unsigned k = 0; k < s.nwork; k++)
            run_strategy(comm, &s, s.warmup + (k == 0 ? s.first_warmup : 0),
                         s.fixed_ns[k], s.work_ns[k], &share);
        ld_phases_end(&ph, LD_PHASE_STRATEGIES);
        for (unsigned k = 0; k < s.nwork; k++)
            reduce_strategy(comm, &s, &share, rank, size);
        MPI_Barrier(comm);
        ld_phases_end(&ph, LD_PHASE_GATHER);
        write_file(comm, &s, &share, rank);
        ld_phases_end(&ph, LD_PHASE_WRITE);
        print_phases(comm, &ph, rank, size);
    }
    ld_share_free(&share);
    MPI_Finalize();
    return rc == 0 ? 0 : 1;
}
