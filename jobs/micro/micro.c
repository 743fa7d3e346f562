/* micro.c: the micro job's declaration. */
#include "micro.h"

/* Its tasks are the green threads of the park family's largest count, not trades. */
static uint64_t micro_tasks(const ld_job_config *cfg)
{
    const ld_micro_config *mc = cfg->opts;
    return mc->micro_max;
}

/* That many parked threads with stacks of their own, as the runtime counts them, and
 * their tasks. */
static uint64_t micro_resident_bytes(const ld_job_config *cfg, size_t n)
{
    return ld_gt_resident_bytes(LD_STACK_OWN, cfg->stack_size, n) + (uint64_t)n * 512;
}

static const ld_strategy micro_strategies[] = {
    {"switch", "one green-thread switch against ucontext swapcontext", ld_micro_switch,
     LD_ON_ONE},
    {"spawn", "spawn+join of an empty green thread against pthread_create+join",
     ld_micro_spawn, LD_ON_ONE},
    {"park", "CPU per park+wake by timer at 1, 10^3, 10^6 sleepers: wheel vs libuv heap",
     ld_micro_park, LD_ON_ONE},
    {"memory", "resident KiB per parked green thread, over 10^5 of them", ld_micro_memory,
     LD_ON_ONE},
    {"task",
     "a green thread's whole life (spawn, park on a deadline, wake, join) vs an OS "
     "thread's",
     ld_micro_task, LD_ON_ONE},
};

static const ld_opt micro_opts[] = {
    {"micro-max", LD_OPT_COUNT, offsetof(ld_micro_config, micro_max), 1, 10000000,
     1000000, NULL, "N",
     "most green threads the park and memory figures use (default 1000000)",
     LD_OPT_RESULT, NULL},
};

const ld_job ld_micro_job = {
    .name = "micro",
    .summary = "the runtime's own costs, each against its reference in the same run",
    .notes = "memory: about --micro-max x 4.5 KiB",
    .opt_in = 1,
    .strategies = micro_strategies,
    .nstrategies = LD_LEN(micro_strategies),
    .opts = micro_opts,
    .nopts = LD_LEN(micro_opts),
    .config_size = LD_JOB_CONFIG_SIZE(ld_micro_config),
    .table = {LD_TABLE_TIME, LD_TABLE_THREADS, LD_TABLE_MEMORY},
    .reports = {LD_REPORT_FIGURES},
    .tasks = micro_tasks,
    .tasks_option = "micro-max",
    .resident_bytes = micro_resident_bytes,
};
