/* carriers.h: run a body on N carrier OS threads, each pinned and with a scheduler.
 *
 * Carrier c is pinned to the rank's CPU c mod ncpus, creates its ld_sched, calls
 * body(c, sched, ctx) to spawn its green threads or start its libuv handles, then runs
 * the scheduler until nothing is left. ld_carriers_run returns once every carrier has.
 */
#ifndef LD_CARRIERS_H
#define LD_CARRIERS_H

#include "gt.h"
#include "job.h"

typedef int (*ld_carrier_body)(unsigned carrier, ld_sched *s, void *ctx);

/* The number of carriers cfg asks for: --carriers, or one per CPU of the rank. */
unsigned ld_carriers_count(const ld_job_config *cfg);

/* Run body on every carrier; the first error any carrier met is returned. */
int ld_carriers_run(const ld_job_config *cfg, ld_carrier_body body, void *ctx);

#endif
