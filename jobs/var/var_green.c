/* var_green.c: CPU-bound work on green threads, misused on purpose.
 *
 * One green thread per trade on the carriers. A VaR never parks, so each green thread
 * runs to the end once started: the carriers give parallelism, the green threads add
 * only spawn and switch cost. This is the row that shows green threads do not help
 * CPU-bound work.
 */
#include "carriers.h"
#include "var.h"

#include <errno.h>
#include <stdlib.h>

typedef struct green_var {
    const ld_job_input *in;
    unsigned ncarriers;
    double **scratch; /* one per carrier: its green threads never interleave */
    struct green_var_task *tasks;
} green_var;

typedef struct green_var_task {
    green_var *run;
    size_t index;
    unsigned carrier;
} green_var_task;

static void value_trade(void *arg)
{
    const green_var_task *t = arg;
    ld_var_one(t->run->in, t->index, t->run->scratch[t->carrier]);
}

static int spawn_share(unsigned c, ld_sched *s, void *ctx)
{
    green_var *g = ctx;
    for (size_t i = c; i < g->in->n; i += g->ncarriers) {
        g->tasks[i] = (green_var_task){.run = g, .index = i, .carrier = c};
        int rc = ld_gt_spawn(s, value_trade, &g->tasks[i], NULL);
        if (rc)
            return rc;
    }
    return 0;
}

int ld_var_green(const ld_job_input *in)
{
    green_var g = {.in = in, .ncarriers = ld_carriers_count(in->cfg)};
    g.scratch = ld_var_scratch_alloc(in, g.ncarriers);
    g.tasks = malloc((in->n ? in->n : 1) * sizeof *g.tasks);
    int rc = g.scratch && g.tasks ? 0 : -ENOMEM;
    if (rc == 0)
        rc = ld_carriers_run(in->cfg, spawn_share, &g);
    ld_var_scratch_free(g.scratch, g.ncarriers);
    free(g.tasks);
    return rc;
}
