/* var.h: the var job's strategies; the kernel itself is var_kernel.h. */
#ifndef LD_VAR_H
#define LD_VAR_H

#include "job.h"

/* Value trade i into out[i].var, with scratch room for cfg->sims doubles. */
void ld_var_one(const ld_job_input *in, size_t i, ld_trade_result *out, double *scratch);

int ld_var_sequential(const ld_job_input *in, ld_trade_result *out);
int ld_var_green(const ld_job_input *in, ld_trade_result *out);
int ld_var_pool(const ld_job_input *in, ld_trade_result *out);
int ld_var_steal(const ld_job_input *in, ld_trade_result *out);

extern const ld_job ld_var_job;

#endif
