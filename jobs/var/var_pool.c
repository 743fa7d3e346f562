/* var_pool.c: a fixed pool of workers, each pinned to one CPU of the rank. */
#include "workers.h"
#include "var.h"

#include <errno.h>
#include <stdlib.h>

typedef struct pool_var {
    const ld_job_input *in;
    double **scratch; /* one buffer per worker */
} pool_var;

static void value_trade(void *ctx, size_t index, unsigned worker)
{
    pool_var *v = ctx;
    ld_var_one(v->in, index, v->scratch[worker]);
}

int ld_var_pool(const ld_job_input *in)
{
    ld_cpus cpus;
    ld_job_worker_cpus(in->cfg, &cpus);
    pool_var v = {.in = in, .scratch = ld_var_scratch_alloc(in, cpus.n)};
    ld_workers *pool = NULL;
    int rc = v.scratch ? 0 : -ENOMEM;
    if (rc == 0)
        rc = ld_workers_create(&pool, &cpus);
    if (rc == 0) {
        rc = ld_workers_run(pool, in->n, value_trade, &v);
        ld_workers_destroy(pool);
    }
    ld_var_scratch_free(v.scratch, cpus.n);
    return rc;
}
