/* models_hybrid.c: stackless tasks dispatched onto green threads, as Kotlin's
 * coroutines on a dispatcher backed by virtual threads.
 *
 * Such a dispatcher runs each continuation as a task of a virtual-thread-per-task
 * executor. A coroutine's start is one continuation: a fresh green thread runs it to
 * its delay(), which suspends it, stackless, as a deadline, and the thread ends. The
 * deadline's fire dispatches the resumption: a second fresh green thread runs the
 * rest, the task's end. So a task costs two green threads that never park, and no
 * stack while it waits.
 */
#include "models.h"

/* The coroutine's first continuation: up to its delay(), which suspends it. */
static void hybrid_start(void *arg)
{
    ld_models_delay(arg);
}

/* The continuation after the delay: the task's end. */
static void hybrid_finish(void *arg)
{
    ld_models_done(arg);
}

/* The delay is over: dispatch the resumption onto a fresh green thread. A spawn that
 * fails ends the task with the error. */
static void hybrid_resume(void *item, void *ctx)
{
    (void)item;
    ld_models_carrier *c = ctx;
    int rc = ld_gt_spawn(c->sched, hybrid_finish, c, NULL);
    if (rc != 0) {
        c->rc = c->rc ? c->rc : rc;
        ld_models_done(c);
    }
}

static const ld_models_shape hybrid_shape = {.task = hybrid_start,
                                             .resume = hybrid_resume};

int ld_models_hybrid(const ld_job_input *in)
{
    return ld_models_on_carriers(in, &hybrid_shape);
}
