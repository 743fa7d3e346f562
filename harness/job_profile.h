/* job_profile.h: the resource profile a job's strategies run under, as options and
 * hooks any job can declare.
 *
 *   --profile none|low|high   the four-model study's: low is 1 CPU and 512 MiB, high
 *                             4 CPUs and 4 GiB; none leaves the machine as it is
 *   --cpus N, --mem-limit B   either half alone, over the profile's
 *
 * profile.h grants it. A job's enter hook calls ld_job_profile_enter before each
 * measured run and its leave hook is ld_job_profile_leave: the run gets the granted
 * CPUs (its carriers and workers are sized from them), and the figures say what was
 * asked and what was granted, so a clamped profile shows in the table and the file:
 *   cpus, cpus_asked              CPUs
 *   mem_limit_mib, mem_asked_mib  MiB (0: no limit)
 *   clamped                       1: fewer CPUs than asked, 2: less memory, 3: both
 *   cgroup_peak_mib               the most memory charged to the group during the run
 */
#ifndef LD_JOB_PROFILE_H
#define LD_JOB_PROFILE_H

#include "job.h"

enum ld_job_profile_name { LD_PROFILE_NONE, LD_PROFILE_LOW, LD_PROFILE_HIGH };

/* The three options' values, a member of the job's config struct. */
typedef struct ld_job_profile {
    int profile;        /* enum ld_job_profile_name */
    uint64_t cpus;      /* 0: the profile's */
    uint64_t mem_limit; /* bytes; 0: the profile's */
} ld_job_profile;

extern const char *const ld_job_profile_names[]; /* "none", "low", "high", NULL */

#define LD_JOB_PROFILE_AT(type, member, field)                                           \
    (offsetof(type, member) + offsetof(ld_job_profile, field))

/* The three options for a job's table, whose config struct `type` holds its
 * ld_job_profile in `member`. */
#define LD_JOB_PROFILE_OPTS(type, member)                                                \
    {"profile",                                                                          \
     LD_OPT_CHOICE,                                                                      \
     LD_JOB_PROFILE_AT(type, member, profile),                                           \
     0,                                                                                  \
     0,                                                                                  \
     LD_PROFILE_NONE,                                                                    \
     ld_job_profile_names,                                                               \
     "none|low|high",                                                                    \
     "resources per rank: low 1 CPU and 512 MiB, high 4 CPUs and 4 GiB, clamped to "     \
     "what the machine has and said so (default none)",                                  \
     LD_OPT_RESULT,                                                                      \
     NULL},                                                                              \
        {"cpus",                                                                         \
         LD_OPT_COUNT,                                                                   \
         LD_JOB_PROFILE_AT(type, member, cpus),                                          \
         1,                                                                              \
         LD_CPUS_MAX,                                                                    \
         0,                                                                              \
         NULL,                                                                           \
         "N",                                                                            \
         "CPUs per rank, an affinity mask (default: the profile's)",                     \
         LD_OPT_RESULT,                                                                  \
         NULL},                                                                          \
    {                                                                                    \
        "mem-limit", LD_OPT_COUNT, LD_JOB_PROFILE_AT(type, member, mem_limit), 1,        \
            1125899906842624.0, 0, NULL, "BYTES",                                        \
            "memory per rank, a cgroup limit; a run that outgrows it is killed, and "    \
            "said so (default: the profile's)",                                          \
            LD_OPT_RESULT, NULL                                                          \
    }

/* The CPUs (0: all) and memory (0: no limit) jp asks for, for a job that grants them
 * to a process of its own rather than to the rank. */
void ld_job_profile_asked(const ld_job_profile *jp, unsigned *cpus, uint64_t *mem_bytes);

/* The figures a profile reports, named as above: what was granted and asked (the
 * memory in bytes), then, after the run, the group's peak. For a job that grants the
 * profile to a process of its own and reads these back from it. */
void ld_job_profile_figures(ld_figures *f, unsigned cpus, unsigned cpus_asked,
                            uint64_t mem_limit, uint64_t mem_asked, unsigned clamped);
void ld_job_profile_peak(ld_figures *f, uint64_t peak_bytes);

/* For a job's mem_floor hook (job.h): what a process under a memory limit is charged
 * before its first task: itself, `carriers` carriers, `threads` other threads, and
 * `stack_bytes` of stacks reserved for `stacks` tasks; what[0..whatlen) says so. */
uint64_t ld_job_profile_floor(unsigned carriers, unsigned threads, uint64_t stacks,
                              uint64_t stack_bytes, char *what, size_t whatlen);

/* For a job's enter hook: grant jp to the run (see job.h's enter). */
int ld_job_profile_enter(const ld_job_profile *jp, const ld_job_config *cfg,
                         ld_job_config *run, ld_figures *figures, void **scope);

/* A job's leave hook: the cgroup's peak as a figure, then the profile given back. */
void ld_job_profile_leave(void *scope, ld_figures *figures);

#endif
