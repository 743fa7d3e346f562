/* cpuinfo.h: the CPU a run's figures belong to.
 *
 * A run's figures compare only with runs on the same CPU model with the same
 * instruction-set flags, so the results file names them (root attributes cpu_model
 * and cpu_flags) and the analysis never merges runs across them. Read before any work,
 * with the other checks: the write that records them does not pay for the read. */
#ifndef LD_CPUINFO_H
#define LD_CPUINFO_H

#include <mpi.h>

typedef struct ld_cpuinfo {
    char model[256]; /* "model name", as /proc/cpuinfo says it; "" where it does not */
    char flags[256]; /* the kept flags that are present, comma-separated */
} ld_cpuinfo;

/* Collective over comm: rank 0's CPU model and kept flags, on every rank. */
void ld_cpuinfo_of_rank0(MPI_Comm comm, ld_cpuinfo *out);

#endif
