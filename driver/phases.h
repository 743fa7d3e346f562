/* phases.h: where a run's wall time goes, phase by phase, on each rank.
 *
 * A run is a sequence of phases, each timed on every rank with the monotonic clock
 * from the moment the previous one ended, so the phases add up to the rank's wall
 * time from process start to the end of the write. /ranks/phase_ns keeps them and
 * rank 0 prints their maxima across ranks in one line. */
#ifndef LD_PHASES_H
#define LD_PHASES_H

#include <stdint.h>

enum ld_phase {
    LD_PHASE_STARTUP,    /* process start and MPI_Init to the options parsed */
    LD_PHASE_CHECKS,     /* node discovery, output and address-space checks (the
                            output created and removed once by parallel HDF5) */
    LD_PHASE_BOOK,       /* rank 0 builds the book in rank-major order, or under
                            --partition ranges each rank its own trades */
    LD_PHASE_SCATTER,    /* MPI_Scatterv of the trades */
    LD_PHASE_PREPARE,    /* resource checks, each job's share and prepare */
    LD_PHASE_STRATEGIES, /* every strategy's warm-up and measured iterations */
    LD_PHASE_GATHER,     /* the reductions and gathers behind the tables, printing,
                            and the disk's last check before the write */
    LD_PHASE_WRITE,      /* the HDF5 write, up to the file closed */
    LD_PHASES
};

extern const char *const ld_phase_names[LD_PHASES];

typedef struct ld_phases {
    int64_t ns[LD_PHASES];
    int64_t mark; /* when the phase now running began */
} ld_phases;

/* The monotonic clock, in nanoseconds. */
int64_t ld_phases_now(void);

/* Start timing at `at` (ld_phases_now() taken as early as the process can). */
void ld_phases_start(ld_phases *p, int64_t at);

/* The phase now running ends: add its time to ns[k], and start the next one. */
void ld_phases_end(ld_phases *p, enum ld_phase k);

/* The sum of every phase: this rank's wall time so far. */
int64_t ld_phases_total(const ld_phases *p);

#endif
