/* models_green.c: one green thread per task, parked on its carrier's deadlines for
 * the delay, as a virtual thread per task sleeps. */
#include "models.h"

/* A task: the sleep parks it; the carrier runs others meanwhile. */
static void green_task(void *arg)
{
    ld_models_carrier *c = arg;
    ld_gt_sleep_ns(c->delay_ns);
    ld_models_done(c);
}

static const ld_models_shape green_shape = {.task = green_task};

int ld_models_green(const ld_job_input *in)
{
    return ld_models_on_carriers(in, &green_shape);
}
