/* test_gt_spawn.c: a batch spawn (ld_gt_spawn_n) is n spawns of detached threads.
 *
 * - Every thread of a batch larger than the run queue's first ring runs once, in the
 *   order queued, after the threads queued before it and before those after.
 * - Each starts with its spawner's floating-point rounding mode.
 * - A batch refused (no scheduler, no function, another thread's scheduler) spawns
 *   nothing and says so; a batch of 0 spawns nothing and succeeds.
 */
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "gt.h"
#include "mode.h"

#define BATCH 300u /* more than the run queue's first ring of 64 */

static unsigned order[BATCH + 2], ran;
static unsigned down_children;

/* What ran, in order: 0 and 2 the threads around the batch, 1 each of it. */
static void note(unsigned what)
{
    if (ran < sizeof order / sizeof *order)
        order[ran] = what;
    ran++;
}

static void record(void *arg)
{
    note((unsigned)(uintptr_t)arg);
}

static void batch_member(void *arg)
{
    (void)arg;
    note(1);
    down_children += fegetround() == FE_DOWNWARD;
}

/* One thread before the batch and one after it, from a green thread whose rounding
 * mode is downward; the carrier's is restored when it returns. */
static void spawner(void *arg)
{
    ld_sched *s = arg;
    size_t spawned = 0;
    int rc;

    CHECK(ld_gt_spawn(s, record, (void *)(uintptr_t)0, NULL) == 0, "spawn");
    fesetround(FE_DOWNWARD);
    rc = ld_gt_spawn_n(s, batch_member, NULL, BATCH, &spawned);
    CHECK(rc == 0 && spawned == BATCH, "ld_gt_spawn_n: %d, %zu spawned", rc, spawned);
    fesetround(FE_TONEAREST);
    CHECK(ld_gt_spawn(s, record, (void *)(uintptr_t)2, NULL) == 0, "spawn");
    rc = ld_gt_spawn_n(s, batch_member, NULL, 0, &spawned);
    CHECK(rc == 0 && spawned == 0, "a batch of 0: %d, %zu spawned", rc, spawned);
}

static void test_batch_order(void)
{
    ld_sched *s = NULL;
    unsigned i;
    int rc = test_sched_create(&s);

    CHECK(rc == 0, "ld_sched_create: %d", rc);
    if (rc != 0)
        return;
    CHECK(ld_gt_spawn(s, spawner, s, NULL) == 0, "spawn");
    rc = ld_sched_run(s);
    CHECK(rc == 0, "ld_sched_run: %d", rc);
    ld_sched_destroy(s);
    CHECK(ran == BATCH + 2, "%u threads ran", ran);
    for (i = 0; i < ran && i < BATCH + 2; i++)
        CHECK(order[i] == (i == 0           ? 0u
                           : i == BATCH + 1 ? 2u
                                            : 1u),
              "run %u was %u", i, order[i]);
    CHECK(down_children == BATCH, "%u of %u started rounding downward", down_children,
          BATCH);
}

/* A scheduler of another thread's: an error, as ld_gt_spawn's. */
static void *spawn_from_other(void *arg)
{
    size_t spawned = 1;
    int rc = ld_gt_spawn_n(arg, record, NULL, 3, &spawned);

    CHECK(rc == -EPERM && spawned == 0, "from another thread: %d, %zu spawned", rc,
          spawned);
    return NULL;
}

static void test_batch_refused(void)
{
    ld_sched *s = NULL;
    pthread_t other;
    size_t spawned = 1;
    int rc = test_sched_create(&s);

    CHECK(rc == 0, "ld_sched_create: %d", rc);
    if (rc != 0)
        return;
    rc = ld_gt_spawn_n(NULL, record, NULL, 3, &spawned);
    CHECK(rc == -EINVAL && spawned == 0, "no scheduler: %d, %zu spawned", rc, spawned);
    spawned = 1;
    rc = ld_gt_spawn_n(s, NULL, NULL, 3, &spawned);
    CHECK(rc == -EINVAL && spawned == 0, "no function: %d, %zu spawned", rc, spawned);
    CHECK(pthread_create(&other, NULL, spawn_from_other, s) == 0, "pthread_create");
    pthread_join(other, NULL);
    rc = ld_sched_run(s);
    CHECK(rc == 0, "ld_sched_run with nothing spawned: %d", rc);
    ld_sched_destroy(s);
}

int main(int argc, char **argv)
{
    test_mode_from_args(argc, argv);
    alarm(30); /* a hang fails the test instead of waiting for CTest's timeout */
    test_batch_order();
    test_batch_refused();
    if (failures != 0) {
        fprintf(stderr, "test_gt_spawn: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_spawn: ok\n");
    return 0;
}
