/* table.h: the results table rank 0 prints, in the seed study's columns. */
#ifndef LD_TABLE_H
#define LD_TABLE_H

#include <mpi.h>
#include <stdio.h>

#include "partition.h"
#include "phases.h"
#include "run.h"

/* Collective: reduce every record across ranks and print the tables on rank 0. */
void ld_table_print(MPI_Comm comm, const ld_options *o, const ld_share *share,
                    const ld_run *run, FILE *out);

/* Collective: unless --quiet, rank 0 prints one line of each phase's largest time
 * across ranks, the largest wall time, and the write's share of it. */
void ld_table_phases(MPI_Comm comm, const ld_options *o, const ld_phases *ph, FILE *out);

#endif
