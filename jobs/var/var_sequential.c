/* var_sequential.c: the reference every parallel var strategy is measured against. */
#include "var.h"

#include <errno.h>
#include <stdlib.h>

int ld_var_sequential(const ld_job_input *in)
{
    double **scratch = ld_var_scratch_alloc(in, 1);
    if (!scratch)
        return -ENOMEM;
    for (size_t i = 0; i < in->n; i++)
        ld_var_one(in, i, scratch[0]);
    ld_var_scratch_free(scratch, 1);
    return 0;
}
