/* models_stackless.c: one deadline per task on its carrier's loop, with no stack and
 * no green thread: a coroutine suspended in a non-blocking delay() is its
 * continuation alone, and the deadline's callback is that continuation, whose one
 * step left is the task's end. */
#include "models.h"

/* The delay is over: the continuation runs to the task's end. */
static void stackless_resume(void *item, void *ctx)
{
    (void)item;
    ld_models_done(ctx);
}

static const ld_models_shape stackless_shape = {.resume = stackless_resume};

int ld_models_stackless(const ld_job_input *in)
{
    return ld_models_on_carriers(in, &stackless_shape);
}
