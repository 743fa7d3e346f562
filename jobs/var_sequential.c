/* var_sequential.c: the reference every parallel var strategy is measured against. */
#include "var.h"

#include <errno.h>
#include <stdlib.h>

int ld_var_sequential(const ld_job_input *in, ld_trade_result *out)
{
    double *scratch = malloc(in->cfg->sims * sizeof *scratch);
    if (!scratch)
        return -ENOMEM;
    for (size_t i = 0; i < in->n; i++)
        ld_var_one(in, i, out, scratch);
    free(scratch);
    return 0;
}
