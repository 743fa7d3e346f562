/* var_pool.c: a fixed pool of workers, each pinned to one CPU of the rank. */
#include "workers.h"
#include "var.h"

#include <errno.h>
#include <stdlib.h>

typedef struct pool_var {
    const ld_job_input *in;
    ld_trade_result *out;
    double **scratch; /* one buffer per worker */
} pool_var;

static void value_trade(void *ctx, size_t index, unsigned worker)
{
    pool_var *v = ctx;
    ld_var_one(v->in, index, v->out, v->scratch[worker]);
}

int ld_var_pool(const ld_job_input *in, ld_trade_result *out)
{
    ld_cpus cpus;
    ld_job_worker_cpus(in->cfg, &cpus);
    pool_var v = {.in = in, .out = out, .scratch = calloc(cpus.n, sizeof(double *))};
    ld_workers *pool = NULL;
    int rc = v.scratch ? 0 : -ENOMEM;
    for (unsigned w = 0; rc == 0 && w < cpus.n; w++)
        if (!(v.scratch[w] = malloc(in->cfg->sims * sizeof(double))))
            rc = -ENOMEM;
    if (rc == 0)
        rc = ld_workers_create(&pool, &cpus);
    if (rc == 0) {
        rc = ld_workers_run(pool, in->n, value_trade, &v);
        ld_workers_destroy(pool);
    }
    for (unsigned w = 0; v.scratch && w < cpus.n; w++)
        free(v.scratch[w]);
    free(v.scratch);
    return rc;
}
