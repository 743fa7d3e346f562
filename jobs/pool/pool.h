/* pool.h: the pool job, the pooling study's load: fresh against pooled green threads
 * behind a real HTTP server, under a real memory limit.
 *
 * Each rank runs three processes beside itself, so that the memory limit bounds the
 * server under test alone, as the study's heap limit bounded its JVM:
 *
 *   the backend       loomdist-clearinghouse, answering GET /think?ms=--think-ms,
 *                     started once for the job
 *   the server        loomdist-pool-server (pool_server.h), started for each run
 *                     under --cpus and --mem-limit, its strategy the job's
 *   the load          wrk, or loomdist-load where wrk is not installed (--load):
 *                     --connections closed-loop connections, once for the warm-up
 *                     (--warmup-s) and once for the measurement (--measure-s)
 *
 * Strategies: fresh, pooled, pooled-trim (pool_server.h says what each is). The trades
 * are not used: --connections is per rank. Every figure is the rank's, averaged over
 * ranks and iterations in the table; requests per second come from the load
 * generator, counted the same way by the server beside them.
 */
#ifndef LD_POOL_H
#define LD_POOL_H

#include "job.h"
#include "job_profile.h"

/* The study's phases: a 30 s warm-up, then 30 s measured. */
#define LD_POOL_STUDY_S 30.0

enum ld_pool_load { LD_POOL_LOAD_AUTO, LD_POOL_LOAD_WRK, LD_POOL_LOAD_BUILTIN };

/* pool's options. */
typedef struct ld_pool_config {
    uint64_t connections;   /* closed-loop clients, per rank */
    double think_ms;        /* the backend's, per call */
    double warmup_s;        /* the warm-up phase */
    double measure_s;       /* the measured phase */
    int study_phases;       /* 30 s and 30 s instead */
    uint64_t warmup_depth;  /* frames of the warm-up's call path */
    uint64_t trim_after;    /* pooled-trim's K */
    uint64_t backend_conns; /* backend calls in flight at once, per rank */
    int load;               /* enum ld_pool_load */
    uint64_t load_threads;  /* the generator's threads */
    ld_job_profile profile; /* the server's CPUs and memory */
} ld_pool_config;

/* The strategies (pool_run.c). */
int ld_pool_fresh(const ld_job_input *in);
int ld_pool_pooled(const ld_job_input *in);
int ld_pool_pooled_trim(const ld_job_input *in);

/* What prepare starts, and every run uses: the backend (pool_run.c). */
int ld_pool_prepare(const ld_job_config *cfg, const ld_trade *trades, size_t n,
                    void **prepared, int64_t *bound_ns);
void ld_pool_release(void *prepared);

extern const ld_job ld_pool_job;

#endif
