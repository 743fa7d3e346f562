/* mixed_phase.c: one phase of a mixed run: the carriers, and the VaR pool beside them.
 *
 * The pool is var's own (a worker pinned per CPU of var_cpus, each with its scratch),
 * made before the phase's clock starts. While it runs on the calling thread, the
 * carriers run on a thread of their own; the phase ends when both have.
 */
#include "census.h"
#include "metrics.h"
#include "mixed.h"
#include "workers.h"

#include <errno.h>
#include <pthread.h>

typedef struct pool_side {
    ld_mixed_phase *p;
    double **scratch; /* one per worker */
} pool_side;

typedef struct carrier_side {
    ld_mixed_phase *p;
    int rc;
} carrier_side;

/* One trade's VaR on a worker, by var's own code, and when it was done. */
static void value_trade(void *ctx, size_t index, unsigned worker)
{
    pool_side *v = ctx;
    ld_var_one(&v->p->var_in, index, v->scratch[worker]);
    v->p->var_done_ns[index] = ld_now_ns() - v->p->var_in.t0;
}

static void *carriers_main(void *arg)
{
    carrier_side *c = arg;
    c->rc = c->p->settle_on ? ld_mixed_carriers(c->p) : 0;
    return NULL;
}

static void phase_start(ld_mixed_phase *p)
{
    int64_t t0 = ld_now_ns();
    p->settle_in.t0 = t0;
    p->var_in.t0 = t0;
}

/* The pool runs here while the carriers run on a thread of their own. */
static int pool_beside_carriers(ld_mixed_phase *p, ld_workers *pool, pool_side *v)
{
    ld_census_crew crew;
    pthread_t thread;
    carrier_side c = {.p = p};
    ld_census_crew_init(&crew);
    phase_start(p);
    int err = ld_census_spawn(&crew, &thread, NULL, carriers_main, &c);
    ld_census_crew_complete(&crew);
    int rc = err ? -err : ld_workers_run(pool, p->var_in.n, value_trade, v);
    if (!err)
        pthread_join(thread, NULL);
    ld_census_crew_destroy(&crew);
    return rc ? rc : c.rc;
}

int ld_mixed_phase_run(ld_mixed_phase *p)
{
    int rc;
    if (p->var != LD_MIXED_VAR_POOL) {
        phase_start(p);
        rc = ld_mixed_carriers(p);
    } else {
        pool_side v = {.p = p,
                       .scratch = ld_var_scratch_alloc(&p->var_in, p->var_cpus.n)};
        ld_workers *pool = NULL;
        rc = v.scratch ? ld_workers_create(&pool, &p->var_cpus) : -ENOMEM;
        if (rc == 0) {
            rc = pool_beside_carriers(p, pool, &v);
            ld_workers_destroy(pool);
        }
        ld_var_scratch_free(v.scratch, p->var_cpus.n);
    }
    return rc;
}
