/* carriers.h: run a body on N carrier OS threads, each pinned and with a scheduler.
 *
 * Carrier c is pinned to the rank's CPU c mod ncpus and has its ld_sched. A run calls
 * body(c, sched, ctx) on every carrier to spawn its green threads or start its libuv
 * handles, then runs the scheduler until nothing is left. ld_carriers_run returns once
 * every carrier has.
 *
 * A strategy's carriers may outlive one run, as a JVM's carrier pool outlives one
 * benchmark operation: a config whose `kept` is set runs on the carriers kept there,
 * made at the first run and made again only when a run asks for others (another
 * count, other CPUs, another depot or stack shape). Without it each run makes its
 * carriers and ends them, and their start-up is inside the run's clock.
 */
#ifndef LD_CARRIERS_H
#define LD_CARRIERS_H

#include "gt.h"
#include "job.h"

typedef struct ld_carriers ld_carriers;

typedef int (*ld_carrier_body)(unsigned carrier, ld_sched *s, void *ctx);

/* The number of carriers cfg asks for: --carriers, or one per CPU of the rank. */
unsigned ld_carriers_count(const ld_job_config *cfg);

/* How many threads a spawner on a carrier starts between two of its yields: all
 * (SIZE_MAX) in copy mode, 64 with stacks of their own (carriers.c says why). */
size_t ld_carriers_spawn_batch(const ld_job_config *cfg);

/* Run body on every carrier; the first error any carrier met is returned. */
int ld_carriers_run(const ld_job_config *cfg, ld_carrier_body body, void *ctx);

/* An empty holder for carriers kept across runs (cfg->kept); -ENOMEM. */
int ld_carriers_keep(ld_carriers **out);

/* End the kept carriers and free the holder; before the depot their stacks came from
 * is destroyed. NULL is a no-op. */
void ld_carriers_end(ld_carriers *k);

#endif
