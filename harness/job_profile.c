/* job_profile.c: a job's resource profile, from its options to profile.h and back. */
#include "job_profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"

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
static void say_granted(const ld_confine *p, const ld_cpus *offered, ld_figures *f)
{
    ld_job_profile_figures(f, p->cpus.n, p->cpus_asked ? p->cpus_asked : offered->n,
                           p->mem_limit, p->mem_asked, p->clamped);
}

void ld_job_profile_figures(ld_figures *f, unsigned cpus, unsigned cpus_asked,
                            uint64_t mem_limit, uint64_t mem_asked, unsigned clamped)
{
    ld_figure_add(f, "cpus", cpus, "CPUs");
    ld_figure_add(f, "cpus_asked", cpus_asked, "CPUs");
    ld_figure_add(f, "mem_limit_mib", (double)mem_limit / MIB, "MiB");
    ld_figure_add(f, "mem_asked_mib", (double)mem_asked / MIB, "MiB");
    ld_figure_add(f, "clamped", clamped, "1 cpus, 2 memory");
}

void ld_job_profile_peak(ld_figures *f, uint64_t peak_bytes)
{
    ld_figure_add(f, "cgroup_peak_mib", (double)peak_bytes / MIB, "MiB");
}

/* What a process's memory group is charged before its first task, measured by the
 * group's peak in loomdist-models-run (x86_64 Debian 12, cgroup v1; what a process
 * mapped before it entered the group stays charged to the group it came from): the
 * process itself, 256 KiB; each carrier, its loop, scheduler and stacks, 160-210 KiB;
 * each OS thread of a strategy on threads of its own (LD_ON_OWN) about 35 KiB. Each is
 * the least seen, so that a limit refused surely cannot run. */
#define PROCESS_FLOOR (256u << 10)
#define CARRIER_FLOOR (128u << 10)
#define THREAD_FLOOR (32u << 10)

uint64_t ld_job_profile_floor(unsigned carriers, unsigned threads, uint64_t stacks,
                              uint64_t stack_bytes, char *what, size_t whatlen)
{
    uint64_t on_threads =
        (uint64_t)carriers * CARRIER_FLOOR + (uint64_t)threads * THREAD_FLOOR;
    int len = snprintf(what, whatlen, "the process %.2f MiB, %u thread(s) %.2f MiB",
                       PROCESS_FLOOR / MIB, carriers + threads, (double)on_threads / MIB);
    if (stacks && len > 0 && (size_t)len < whatlen)
        snprintf(what + len, whatlen - (size_t)len, ", %" PRIu64 " stacks %.2f MiB",
                 stacks, (double)stack_bytes / MIB);
    return PROCESS_FLOOR + on_threads + stack_bytes;
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
    ld_confine *p = malloc(sizeof *p);
    if (!p)
        return -ENOMEM;
    int rc = ld_confine_enter(p, cfg->cpus, cpus, mem);
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
    ld_confine *p = scope;
    ld_job_profile_peak(figures, ld_confine_mem_peak(p));
    int rc = ld_confine_leave(p);
    if (rc != 0)
        fprintf(stderr, "loomdist: could not give the resource profile back: %s\n",
                strerror(-rc));
    free(p);
}
