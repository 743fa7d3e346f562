/* models_carriers.c: one operation on the carriers, for green, stackless and hybrid.
 *
 * Carrier c takes tasks c, c + N, ... of the operation's, as an executor hands them
 * round. A task that starts as a green thread is spawned by a spawner green thread of
 * the carrier's, a batch between yields, as an executor's submit loop starts virtual
 * threads: each batch goes to sleep while the next is made. A stackless task is only
 * its deadline, so it starts from the carrier's loop, and the deadline's fire is its
 * continuation. The operation is over when every carrier's tasks are done and its
 * loop has nothing left: ld_carriers_run returns.
 */
#include "carriers.h"
#include "models.h"

#include <errno.h>
#include <stdlib.h>

typedef struct models_op {
    const ld_models_shape *shape;
    ld_models_carrier *carriers;
    unsigned ncarriers;
    size_t tasks;
    uint64_t delay_ns;
} models_op;

/* Tasks spawned between two yields of the spawner. */
#define SPAWN_BATCH 64

/* n of c's tasks are over: the last closes its deadlines, so its loop can end. */
static void tasks_over(ld_models_carrier *c, size_t n)
{
    c->left -= n;
    if (c->left == 0 && c->delays)
        ld_deadlines_close(c->delays);
}

void ld_models_done(ld_models_carrier *c)
{
    tasks_over(c, 1);
}

/* The delay starts at the loop's next look at the clock, as a green sleep's does; a
 * delay of 0 is over now, and one the set had no room for ends its task with the
 * error. */
void ld_models_delay(ld_models_carrier *c)
{
    int rc = ld_deadlines_add_after(c->delays, c, c->delay_ns);
    if (rc == 1) {
        c->shape->resume(c, c);
    } else if (rc < 0) {
        c->rc = c->rc ? c->rc : rc;
        ld_models_done(c);
    }
}

/* The carrier's spawner, a green thread: its tasks, a batch at a time, each batch one
 * ld_gt_spawn_n. A spawn that fails ends the tasks not yet spawned. */
static void spawn_share(void *arg)
{
    ld_models_carrier *c = arg;
    for (size_t i = 0; i < c->share;) {
        size_t n = c->share - i < SPAWN_BATCH ? c->share - i : SPAWN_BATCH, spawned;
        int rc = ld_gt_spawn_n(c->sched, c->shape->task, c, n, &spawned);
        i += spawned;
        if (rc != 0) {
            c->rc = rc;
            tasks_over(c, c->share - i);
            return;
        }
        if (i % SPAWN_BATCH == 0)
            ld_gt_yield();
    }
}

/* Carrier c's start: its share, its set of deadlines when the shape has delays, and
 * then its tasks' starts, by the spawner or straight from here. */
static int carrier_start(unsigned index, ld_sched *s, void *ctx)
{
    models_op *op = ctx;
    ld_models_carrier *c = &op->carriers[index];
    size_t share = op->tasks / op->ncarriers + (index < op->tasks % op->ncarriers);
    *c = (ld_models_carrier){.shape = op->shape,
                             .sched = s,
                             .delay_ns = op->delay_ns,
                             .share = share,
                             .left = share};
    if (share == 0)
        return 0;
    int rc = 0;
    if (op->shape->resume)
        rc = ld_deadlines_open(&c->delays, ld_sched_loop(s), op->shape->resume, c);
    if (rc != 0)
        return rc;
    if (op->shape->task) {
        rc = ld_gt_spawn(s, spawn_share, c, NULL);
        if (rc != 0)
            tasks_over(c, share);
        return rc;
    }
    for (size_t i = 0; i < share; i++)
        ld_models_delay(c);
    return 0;
}

int ld_models_on_carriers(const ld_job_input *in, const ld_models_shape *shape)
{
    const ld_models_config *mc = in->cfg->opts;
    models_op op = {.shape = shape,
                    .ncarriers = ld_carriers_count(in->cfg),
                    .tasks = (size_t)mc->tasks,
                    .delay_ns = ld_models_delay_ns(mc)};
    op.carriers = calloc(op.ncarriers, sizeof *op.carriers);
    if (!op.carriers)
        return -ENOMEM;
    int rc = ld_carriers_run(in->cfg, carrier_start, &op);
    for (unsigned c = 0; rc == 0 && c < op.ncarriers; c++)
        rc = op.carriers[c].rc;
    free(op.carriers);
    return rc;
}
