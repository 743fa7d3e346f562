/* test_gt_scale.c: 100,000 green threads at once, in every guard mode (in copy mode:
 * once, since the shared stack has one guard), with no sysctl.
 *
 * Each thread parks; once all are parked, each is unparked, sleeps 1 ms and is
 * joined. The process must not run out of mappings: vm.max_map_count is 65,530 on
 * most machines, and 100,000 stacks with a PROT_NONE page each would need 200,000.
 * Two schedulers one after the other share a stack depot, and the second must find its
 * stacks there. Nothing here is timed.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt.h"
#include "metrics.h"
#include "mode.h"

#define THREADS 100000u

typedef struct scale_run {
    ld_gt **threads;
    size_t parked, woke;
    long maps_parked;
    int failed;
} scale_run;

static scale_run run;

static void sleeper(void *arg)
{
    (void)arg;
    run.parked++;
    ld_gt_park();
    ld_gt_sleep_ns(1000000);
    run.woke++;
}

static void driver(void *arg)
{
    ld_sched *s = arg;
    size_t n = 0;
    for (; n < THREADS; n++)
        if (ld_gt_spawn(s, sleeper, NULL, &run.threads[n]) != 0)
            break;
    if (n < THREADS) {
        fprintf(stderr, "spawn %zu of %u failed\n", n + 1, THREADS);
        run.failed = 1;
    }
    while (run.parked < n)
        ld_gt_yield();
    run.maps_parked = ld_proc_maps();
    for (size_t i = 0; i < n; i++)
        ld_gt_unpark(run.threads[i]);
    for (size_t i = 0; i < n; i++)
        if (ld_gt_join(run.threads[i]) != 0)
            run.failed = 1;
}

/* One scheduler over the depot, all threads through it. */
static int one_scheduler(ld_stack_depot *depot)
{
    ld_sched_config cfg = {.depot = depot};
    ld_sched *s;
    run.parked = run.woke = 0;
    if (ld_sched_create(&s, &cfg) != 0 || ld_gt_spawn(s, driver, s, NULL) != 0)
        return 1;
    if (ld_sched_run(s) != 0)
        run.failed = 1;
    ld_sched_destroy(s);
    if (run.woke != THREADS) {
        fprintf(stderr, "%zu of %u threads woke\n", run.woke, THREADS);
        return 1;
    }
    if (run.maps_parked < 0 || run.maps_parked > 30000) {
        fprintf(stderr, "%ld mappings with every thread parked\n", run.maps_parked);
        return 1;
    }
    return run.failed;
}

/* In a child, so each mode starts with a process of its own. */
static int scale_in_mode(const char *mode)
{
    pid_t pid;
    int status;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        ld_stack_depot *depot;
        setenv("LOOMDIST_STACK_GUARD", mode, 1);
        run.threads = calloc(THREADS, sizeof *run.threads);
        if (!run.threads || ld_stack_depot_create(&depot, 16 * 1024, test_mode) != 0)
            _exit(2);
        int rc = one_scheduler(depot) || one_scheduler(depot);
        /* Every stack is back in the depot: reserving as many maps nothing new. */
        long before = ld_proc_maps();
        rc =
            rc || ld_stack_depot_reserve(depot, THREADS) != 0 || ld_proc_maps() != before;
        ld_stack_depot_destroy(depot);
        _exit(rc);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return 1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "mode %s: status %#x\n", mode, status);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int failures = 0;
    test_mode_from_args(argc, argv);
    alarm(110);
    failures += scale_in_mode("advice");
    if (test_mode == LD_STACK_OWN) {
        failures += scale_in_mode("page");
        failures += scale_in_mode("canary");
    }
    if (failures) {
        fprintf(stderr, "test_gt_scale: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_scale: ok\n");
    return 0;
}
