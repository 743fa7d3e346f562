/* pingpong.c: the latency and bandwidth the platform files are calibrated on, between
 * ranks 0 and 1 under the real MPI: half the mean round trip of 8 bytes is the
 * latency; bytes over half the round trip of 4 MiB, less that latency, the bandwidth.
 * Prints "latency_s L bandwidth_Bps B" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Half the mean round trip of `bytes`, over `reps` round trips after one untimed. */
static double half_round_trip(char *buf, int bytes, int reps, int rank)
{
    double t0 = 0;
    for (int i = -1; i < reps; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / reps / 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { BIG = 4 << 20 };
    char *buf = calloc(BIG, 1);
    if (size < 2 || !buf) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs 2 ranks and 4 MiB\n");
        MPI_Finalize();
        return 2;
    }
    double lat = half_round_trip(buf, 8, 2000, rank);
    double big = half_round_trip(buf, BIG, 20, rank);
    if (rank == 0)
        printf("latency_s %.3e bandwidth_Bps %.3e\n", lat, BIG / (big - lat));
    free(buf);
    MPI_Finalize();
    return 0;
}
