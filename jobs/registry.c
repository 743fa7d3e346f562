/* registry.c: the table of jobs, the one file that names them all. A new job is one
 * entry here. */
#include "micro.h"
#include "mixed.h"
#include "models.h"
#include "pool.h"
#include "settle.h"
#include "var.h"

#include <errno.h>
#include <string.h>

/* The test build's loomdist-toy adds the toy job of tests/fixtures/toy_job, which the
 * contract (job.h) alone declares and runs. */
#ifdef LD_TOY_JOB
extern const ld_job ld_toy_job;
#define LD_TEST_JOBS , &ld_toy_job
#else
#define LD_TEST_JOBS
#endif

const ld_job *const ld_jobs[] = {&ld_settle_job, &ld_var_job,
                                 &ld_micro_job,  &ld_models_job,
                                 &ld_pool_job,   &ld_mixed_job LD_TEST_JOBS};
const size_t ld_njobs = sizeof ld_jobs / sizeof ld_jobs[0];

_Static_assert(sizeof ld_jobs / sizeof ld_jobs[0] <= LD_MAX_JOBS,
               "more jobs than LD_MAX_JOBS: raise it in job.h");

const ld_job *ld_job_find(const char *name)
{
    for (size_t j = 0; j < ld_njobs; j++)
        if (strcmp(ld_jobs[j]->name, name) == 0)
            return ld_jobs[j];
    return NULL;
}

size_t ld_job_index(const ld_job *job)
{
    size_t j = 0;
    while (j < ld_njobs && ld_jobs[j] != job)
        j++;
    return j;
}

int ld_jobs_check(char *err, size_t errlen)
{
    for (size_t j = 0; j < ld_njobs; j++)
        if (ld_job_check(ld_jobs[j], err, errlen) != 0)
            return -EINVAL;
    return 0;
}
