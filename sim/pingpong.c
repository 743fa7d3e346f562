/* pingpong.c: the latency and bandwidth the platform files are calibrated on, between
 * ranks 0 and 1 under the real MPI: half the mean round trip of 8 bytes is the
 * latency; bytes over half the round trip of 4 MiB, less that latency, the bandwidth,
 * both as bytes and as trades in the scatter's own datatype (driver/partition.c), whose
 * field-by-field packing is what the scatter pays.
 * It also times MPI_Pack of those trades alone: the CPU the scatter's ends pay.
 * Prints "latency_s L bandwidth_Bps B trade_bandwidth_Bps T pack_Bps P" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "partition.h"

static const char usage[] =
    "Usage: mpirun -n 2 loomdist-pingpong\n"
    "Measure the MPI latency and bandwidth between ranks 0 and 1, and the CPU cost of\n"
    "packing loomdist's trades, for sim/predict.py platform. Prints on rank 0:\n"
    "  latency_s L bandwidth_Bps B trade_bandwidth_Bps T pack_Bps P\n\n"
    "  --help     this text\n"
    "  --version  the version and git commit\n\n"
    "Exit status: 0 when measured, 2 with fewer than 2 ranks or a bad argument.\n";

/* Any argument ends the run before it measures: --help and --version answered on
 * rank 0 (status 0), anything else refused (2). -1 with no argument: measure. */
static int arguments(int argc, char **argv, int rank)
{
    int help = argc > 1 && strcmp(argv[1], "--help") == 0;
    int version = argc > 1 && strcmp(argv[1], "--version") == 0;
    if (argc < 2)
        return -1;
    if (rank == 0 && help)
        fputs(usage, stdout);
    else if (rank == 0 && version)
        ld_cli_version();
    else if (rank == 0 && !(help || version))
        fprintf(stderr, "loomdist-pingpong: unknown argument '%s' (try --help)\n",
                argv[1]);
    return help || version ? 0 : 2;
}

/* Half the mean round trip of `bytes`, over `reps` round trips after one untimed. */
static double half_round_trip(void *buf, int count, MPI_Datatype type, int reps, int rank)
{
    double t0 = 0;
    for (int i = -1; i < reps; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, count, type, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, count, type, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, count, type, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, type, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / reps / 2;
}

/* Seconds to pack `count` trades of `type` into `out`, the mean of `reps`. */
static double pack_time(const void *in, int count, MPI_Datatype type, void *out,
                        int bytes, int reps)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        int at = 0;
        MPI_Pack(in, count, type, out, bytes, &at, MPI_COMM_SELF);
    }
    return (MPI_Wtime() - t0) / reps;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ld_cli_program = "loomdist-pingpong";
    int status = arguments(argc, argv, rank);
    if (status >= 0) {
        MPI_Finalize();
        return status;
    }
    enum { BIG = 4 << 20 };
    char *buf = calloc(BIG, 1), *packed = malloc(2 * BIG);
    if (size < 2 || !buf || !packed) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs 2 ranks and 4 MiB\n");
        free(buf);
        free(packed);
        MPI_Finalize();
        return 2;
    }
    MPI_Datatype trade = ld_partition_trade_type();
    int trades = BIG / (int)sizeof(ld_trade);
    double lat = half_round_trip(buf, 8, MPI_CHAR, 2000, rank);
    double big = half_round_trip(buf, BIG, MPI_CHAR, 20, rank);
    double typed = half_round_trip(buf, trades, trade, 20, rank);
    double pack = pack_time(buf, trades, trade, packed, 2 * BIG, 20);
    MPI_Type_free(&trade);
    double tbytes = (double)trades * sizeof(ld_trade);
    if (rank == 0)
        printf("latency_s %.3e bandwidth_Bps %.3e trade_bandwidth_Bps %.3e "
               "pack_Bps %.3e\n",
               lat, BIG / (big - lat), tbytes / (typed - lat), tbytes / pack);
    free(buf);
    free(packed);
    MPI_Finalize();
    return 0;
}
