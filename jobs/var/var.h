/* var.h: the var job's strategies; the kernel itself is var_kernel.h. */
#ifndef LD_VAR_H
#define LD_VAR_H

#include "job.h"
#include "var_kernel.h"

/* var's options (--sims, --var-kernel). */
typedef struct ld_var_config {
    uint64_t sims; /* Monte Carlo simulations per trade */
    int kernel;    /* enum ld_var_kernel */
} ld_var_config;

/* One trade's outcome: the per-task column var declares. */
typedef struct ld_var_result {
    double var; /* 95% one-day VaR in dollars */
} ld_var_result;

/* Value trade i into its result, with scratch room for --sims doubles. */
void ld_var_one(const ld_job_input *in, size_t i, double *scratch);

/* Scratch room for --sims doubles for each of n threads, or NULL; and its release. */
double **ld_var_scratch_alloc(const ld_job_input *in, size_t n);
void ld_var_scratch_free(double **scratch, size_t n);

int ld_var_sequential(const ld_job_input *in);
int ld_var_green(const ld_job_input *in);
int ld_var_pool(const ld_job_input *in);
int ld_var_steal(const ld_job_input *in);

extern const ld_job ld_var_job;

/* var's options, for another job that values the same trades and declares them alike
 * (job.h): the simulations and the kernel, at the given offsets of its config. */
extern const char *const ld_var_kernels[]; /* "sort", "select": enum ld_var_kernel */
#define LD_VAR_OPT_SIMS(offset)                                                          \
    {                                                                                    \
        "sims", LD_OPT_COUNT, (offset), 1, 100000000, 20000, NULL, "N",                  \
            "Monte Carlo simulations per trade (default 20000)", LD_OPT_RESULT, NULL     \
    }
#define LD_VAR_OPT_KERNEL(offset)                                                        \
    {                                                                                    \
        "var-kernel", LD_OPT_CHOICE, (offset), 0, 0, LD_VAR_SORT, ld_var_kernels,        \
            "sort|select",                                                               \
            "sort every P&L (the study's way) or select the quantile (default sort)",    \
            LD_OPT_RESULT, NULL                                                          \
    }

#endif
