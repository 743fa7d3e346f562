/* var_one.c: what every var strategy shares: one trade's VaR, and the scratch the
 * kernel draws its simulations into. */
#include "var.h"

#include <stdlib.h>

void ld_var_one(const ld_job_input *in, size_t i, double *scratch)
{
    const ld_var_config *vc = in->cfg->opts;
    ld_var_result *out = in->results;
    out[i].var = ld_var_trade(&in->trades[i], in->cfg->seed, (uint32_t)vc->sims,
                              (enum ld_var_kernel)vc->kernel, scratch);
}

double **ld_var_scratch_alloc(const ld_job_input *in, size_t n)
{
    const ld_var_config *vc = in->cfg->opts;
    double **scratch = calloc(n ? n : 1, sizeof *scratch);
    for (size_t k = 0; scratch && k < n; k++) {
        if (!(scratch[k] = malloc(vc->sims * sizeof(double)))) {
            ld_var_scratch_free(scratch, k);
            return NULL;
        }
    }
    return scratch;
}

void ld_var_scratch_free(double **scratch, size_t n)
{
    for (size_t k = 0; scratch && k < n; k++)
        free(scratch[k]);
    free(scratch);
}
