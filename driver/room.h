/* room.h: is there room for the run's stacks and for its results? Checked before any
 * work, since either running out half-way loses the hours already spent.
 *
 * Stacks: a strategy on carriers has a stack reserved for each of the rank's trades,
 * all at once, so N trades need N times (--stack-size plus a guard page) of address
 * space. Past ulimit -v or ulimit -d the kernel refuses the stacks once the run is
 * under way. (Whether the node has the memory is resources.h's check.)
 *
 * Results: the HDF5 file's size follows from the options alone. A disk without room
 * for it is named before the run, and again before the write in case it filled up in
 * the meantime, since parallel HDF5 does not reliably recover from a write refused for
 * want of space: it may crash or hang in the collective close.
 */
#ifndef LD_ROOM_H
#define LD_ROOM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

/* Collective: 0 when every rank's address-space limits leave room for its stacks,
 * else -1 on every rank with the first short rank's message in err. */
int ld_room_stacks(MPI_Comm comm, const ld_options *o, char *err, size_t errlen);

/* About how many bytes the results file of a run on `ranks` ranks takes, rounded up. */
uint64_t ld_room_output_bytes(const ld_options *o, int ranks);

/* Whether the disk that will hold o->output has `need` bytes free: 0, or -1 with the
 * message in err. A folder that cannot be examined passes: the writer reports it. */
int ld_room_disk(const ld_options *o, uint64_t need, char *err, size_t errlen);

#endif
