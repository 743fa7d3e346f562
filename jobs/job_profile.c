/* job_profile.c: a job's resource profile, from its options to profile.h and back. */
#include "job_profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

const char *const ld_job_profile_names[] = {"none", "low", "high", NULL};

#define MIB (1024.0 * 1024.0)

/* What each named profile asks for, as the four-model study set its JVMs: -Xmx512m
 * on one CPU, -Xmx4g on four. */
static const struct named_profile {
    unsigned cpus;
    uint64_t mem;
} named[] = {
    [LD_PROFILE_NONE] = {0, 0},
    [LD_PROFILE_LOW] = {1, 512ull << 20},
    [LD_PROFILE_HIGH] = {4, 4ull << 30},
};

/* What was asked and what was granted, as figures: every rank adds the same names. */
static void say_granted(const ld_profile *p, const ld_cpus *offered, ld_figures *f)
{
    ld_figure_add(f, "cpus", p->cpus.n, "CPUs");
    ld_figure_add(f, "cpus_asked", p->cpus_asked ? p->cpus_asked : offered->n, "CPUs");
    ld_figure_add(f, "mem_limit_mib", (double)p->mem_limit / MIB, "MiB");
    ld_figure_add(f, "mem_asked_mib", (double)p->mem_asked / MIB, "MiB");
    ld_figure_add(f, "clamped", p->clamped, "1 cpus, 2 memory");
}

void ld_job_profile_asked(const ld_job_profile *jp, unsigned *cpus, uint64_t *mem_bytes)
{
    const struct named_profile *np = &named[jp->profile];
    *cpus = jp->cpus ? (unsigned)jp->cpus : np->cpus;
    *mem_bytes = jp->mem_limit ? jp->mem_limit : np->mem;
}

int ld_job_profile_enter(const ld_job_profile *jp, const ld_job_config *cfg,
                         ld_job_config *run, ld_figures *figures, void **scope)
{
    unsigned cpus;
    uint64_t mem;
    ld_job_profile_asked(jp, &cpus, &mem);
    ld_profile *p = malloc(sizeof *p);
    if (!p)
        return -ENOMEM;
    int rc = ld_profile_enter(p, cfg->cpus, cpus, mem);
    if (rc != 0) {
        free(p);
        return rc;
    }
    run->cpus = &p->cpus;
    say_granted(p, cfg->cpus, figures);
    *scope = p;
    return 0;
}

/* A group left behind would outlive the run, so failing to remove it is said. */
void ld_job_profile_leave(void *scope, ld_figures *figures)
{
    ld_profile *p = scope;
    ld_figure_add(figures, "cgroup_peak_mib", (double)ld_profile_mem_peak(p) / MIB,
                  "MiB");
    int rc = ld_profile_leave(p);
    if (rc != 0)
        fprintf(stderr, "loomdist: could not give the resource profile back: %s\n",
                strerror(-rc));
    free(p);
}
