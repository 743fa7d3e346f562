/* h5out.h: the results file, written collectively with parallel HDF5.
 *
 * Every rank writes its own hyperslab of every per-trade dataset in one collective
 * call; the small datasets (/ranks, each strategy's [iterations][ranks] figures) are
 * gathered to rank 0 in one call each and written there alone. The
 * file is written under a temporary name and renamed only when every rank succeeded,
 * so a crash or an error never leaves a half file under the output name. The layout
 * is the one docs/schema.md documents: one dataset per column.
 */
#ifndef LD_H5OUT_H
#define LD_H5OUT_H

#include <mpi.h>

#include "cpuinfo.h"
#include "node.h"
#include "options.h"
#include "partition.h"
#include "phases.h"
#include "run.h"

/* 2: /trades no longer holds notional_cents and rank, which its other columns give. */
#define LD_SCHEMA_VERSION 2

/* The bytes of one trade's row in /trades: id, price, symbol, quantity, counterparty
 * and side. */
#define LD_H5_TRADE_ROW_BYTES                                                            \
    (2 * sizeof(int64_t) + LD_SYMBOL_LEN + 2 * sizeof(uint32_t) + 1)

typedef struct ld_h5_context {
    const ld_options *o;
    const ld_node *node;
    const ld_share *share;
    const ld_run *run;
    ld_phases *phases;        /* the write ends its phase, then records them all */
    const char *command_line; /* the same on every rank */
    const char *date;         /* rank 0's start time, broadcast */
    const ld_cpuinfo *cpu;    /* rank 0's CPU, broadcast */
} ld_h5_context;

/* The temporary name a run writes before the rename: "<output>.tmp". A run that died
 * leaves only this, and the next run with the same output replaces it. */
void ld_h5_temp_name(const char *output, char *out, size_t len);

/* On rank 0, before parallel HDF5 opens it: create the temporary file new, with
 * O_EXCL and O_NOFOLLOW, so that MPI-IO then truncates a file this run made and not
 * whatever a symbolic link planted at that name points to. 0, or a negative errno
 * (-EEXIST when anything is there). */
int ld_h5_temp_create(const char *tmp);

/* Collective, before any work: create the temporary file as the write will (parallel
 * HDF5 over MPI-IO, every rank), close it and remove it. A file system that MPI-IO or
 * HDF5 refuses, where a plain open(2) succeeds, is found here rather than after the
 * run; the first parallel open's one-time costs (Open MPI loads its MPI-IO components
 * in every rank) are paid here too. Returns 0 on every rank, or -1 on every rank
 * with err set on rank 0. */
int ld_h5_probe(MPI_Comm comm, const char *output, char *err, size_t errlen);

/* Collective: write the file under the temporary name, end the write phase once it is
 * closed, add every rank's phases to it as /ranks/phase_ns (a second, small write by
 * rank 0 alone, itself not timed), then rename it to o->output.
 * Returns 0 on every rank, or -1 on every rank with the temporary file removed and a
 * message from rank 0 on stderr. */
int ld_h5_write(MPI_Comm comm, const ld_h5_context *ctx);

/* The HDF5 library version, as "1.10.8". */
const char *ld_h5_version(void);

#endif
