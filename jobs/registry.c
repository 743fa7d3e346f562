/* registry.c: the table of jobs. A new job is one entry here. */
#include "micro.h"
#include "mixed.h"
#include "models.h"
#include "pool.h"
#include "settle.h"
#include "var.h"

#include <errno.h>
#include <stdio.h>
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

const ld_strategy *ld_job_strategy(const ld_job *job, const char *name)
{
    for (size_t s = 0; s < job->nstrategies; s++)
        if (strcmp(job->strategies[s].name, name) == 0)
            return &job->strategies[s];
    return NULL;
}

/* Whether job declares an option of this name. */
static int declares(const ld_job *job, const char *name)
{
    for (size_t k = 0; k < job->nopts; k++)
        if (strcmp(job->opts[k].name, name) == 0)
            return 1;
    return 0;
}

int ld_job_check(const ld_job *job, char *err, size_t errlen)
{
    const struct {
        const char *what, *limit;
        size_t have, max;
    } limits[] = {
        {"strategies", "LD_MAX_STRATEGIES", job->nstrategies, LD_MAX_STRATEGIES},
        {"options", "LD_MAX_OPTS", job->nopts, LD_MAX_OPTS},
        {"bytes of config", "LD_JOB_CONFIG_MAX", job->config_size, LD_JOB_CONFIG_MAX},
        {"bytes of result", "LD_JOB_RESULT_MAX", job->result_size, LD_JOB_RESULT_MAX},
    };
    for (size_t k = 0; k < LD_LEN(limits); k++)
        if (limits[k].have > limits[k].max) {
            snprintf(err, errlen, "job %s has %zu %s, past %s (%zu): raise it in job.h",
                     job->name, limits[k].have, limits[k].what, limits[k].limit,
                     limits[k].max);
            return -EINVAL;
        }
    if (!job->tasks != !job->tasks_option ||
        (job->tasks_option && !declares(job, job->tasks_option))) {
        snprintf(err, errlen,
                 "job %s: tasks and tasks_option go together, and tasks_option names "
                 "one of its options",
                 job->name);
        return -EINVAL;
    }
    return 0;
}

int ld_jobs_check(char *err, size_t errlen)
{
    for (size_t j = 0; j < ld_njobs; j++)
        if (ld_job_check(ld_jobs[j], err, errlen) != 0)
            return -EINVAL;
    return 0;
}
