/* test_workers_pinning.c: the pinned pool and the CPU helpers under it.
 *
 * A pool over the process's CPUs runs many tiny tasks; each records the CPU it ran on
 * and its worker. Every worker must always have been on the CPU it is pinned to,
 * every index must have run exactly once, and the same pool must serve a second run.
 * ld_cpus_share is checked on fixed CPU lists.
 */
#include "cpus.h"
#include "workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct record {
    ld_workers *pool;
    atomic_int *times; /* how often each index ran */
    int *cpu;          /* where it ran */
    unsigned *worker;  /* and on which worker */
    atomic_int nested; /* what a run started from inside a task returned */
} record;

/* A little work between the two reads, so the scheduler has a chance to move us. */
static void record_task(void *ctx, size_t i, unsigned w)
{
    record *r = ctx;
    int before = ld_cpus_running_on();
    volatile unsigned spin = 0;
    for (unsigned k = 0; k < 2000; k++)
        spin += k;
    (void)spin;
    int after = ld_cpus_running_on();
    r->cpu[i] = before == after ? after : -1000 - after;
    r->worker[i] = w;
    atomic_fetch_add(&r->times[i], 1);
}

static void nested_task(void *ctx, size_t i, unsigned w)
{
    record *r = ctx;
    (void)i, (void)w;
    atomic_store(&r->nested, ld_workers_run(r->pool, 1, nested_task, ctx));
}

/* One run of n tasks, checked index by index. */
static void check_run(ld_workers *pool, size_t n, const char *name)
{
    record r = {.pool = pool};
    r.times = calloc(n, sizeof *r.times);
    r.cpu = calloc(n, sizeof *r.cpu);
    r.worker = calloc(n, sizeof *r.worker);
    if (!r.times || !r.cpu || !r.worker) {
        CHECK(0, "%s: out of memory", name);
    } else {
        int rc = ld_workers_run(pool, n, record_task, &r);
        CHECK(rc == 0, "%s: ld_workers_run returned %d", name, rc);
        size_t wrong_count = 0, wrong_cpu = 0, wrong_worker = 0;
        for (size_t i = 0; i < n; i++) {
            wrong_count += atomic_load(&r.times[i]) != 1;
            if (r.worker[i] >= ld_workers_count(pool))
                wrong_worker++;
            else if (r.cpu[i] != ld_workers_cpu(pool, r.worker[i]))
                wrong_cpu++;
        }
        CHECK(wrong_count == 0, "%s: %zu of %zu indices did not run exactly once", name,
              wrong_count, n);
        CHECK(wrong_worker == 0, "%s: %zu tasks reported a worker out of range", name,
              wrong_worker);
        CHECK(wrong_cpu == 0, "%s: %zu tasks ran off their worker's CPU", name,
              wrong_cpu);
    }
    free(r.times);
    free(r.cpu);
    free(r.worker);
}

static void test_pool(void)
{
    ld_cpus cpus;
    int rc = ld_cpus_current(&cpus);
    CHECK(rc == 0 && cpus.n > 0, "ld_cpus_current returned %d with %u CPUs", rc, cpus.n);
    if (rc != 0)
        return;
    ld_workers *pool;
    rc = ld_workers_create(&pool, &cpus);
    CHECK(rc == 0, "ld_workers_create returned %d", rc);
    if (rc != 0)
        return;
    CHECK(ld_workers_count(pool) == cpus.n, "pool has %u workers for %u CPUs",
          ld_workers_count(pool), cpus.n);
    for (unsigned w = 0; w < cpus.n; w++)
        CHECK(ld_workers_cpu(pool, w) == cpus.id[w], "worker %u pinned to %d, not %d", w,
              ld_workers_cpu(pool, w), cpus.id[w]);
    CHECK(ld_workers_cpu(pool, cpus.n) == -EINVAL, "worker out of range accepted");
    check_run(pool, 20000, "first run");
    check_run(pool, 3, "second run, fewer tasks than workers");
    check_run(pool, 50000, "third run");
    CHECK(ld_workers_run(pool, 0, record_task, NULL) == 0, "an empty run failed");
    record r = {.pool = pool};
    atomic_init(&r.nested, 1);
    rc = ld_workers_run(pool, 1, nested_task, &r);
    CHECK(rc == 0 && atomic_load(&r.nested) == -EBUSY,
          "a run from inside a run returned %d, want -EBUSY", atomic_load(&r.nested));
    ld_workers_destroy(pool);
}

/* A CPU outside the process's mask cannot be pinned, and fails the whole pool. */
static void test_pool_bad_cpu(void)
{
    ld_cpus cpus;
    if (ld_cpus_current(&cpus) != 0)
        return;
    int outside = cpus.id[cpus.n - 1] + 1;
    ld_cpus bad = {.n = 1, .id = {outside}};
    ld_workers *pool = NULL;
    int rc = ld_workers_create(&pool, &bad);
    CHECK(rc < 0, "a pool pinned to CPU %d outside the mask was created (%d)", outside,
          rc);
    ld_cpus none = {.n = 0};
    CHECK(ld_workers_create(&pool, &none) == -EINVAL, "a pool of no CPUs was accepted");
}

/* A helper thread binds itself to the whole set and then pins itself to each CPU. */
static void *bind_thread(void *arg)
{
    const ld_cpus *cpus = arg;
    CHECK(ld_cpus_bind_self(cpus) == 0, "ld_cpus_bind_self on the process's own CPUs");
    for (unsigned i = 0; i < cpus->n; i++) {
        int rc = ld_cpus_pin_self(cpus->id[i]);
        CHECK(rc == 0 && ld_cpus_running_on() == cpus->id[i],
              "pinned to %d, running on %d", cpus->id[i], ld_cpus_running_on());
    }
    ld_cpus empty = {.n = 0};
    CHECK(ld_cpus_bind_self(&empty) == -EINVAL, "binding to no CPU was accepted");
    CHECK(ld_cpus_pin_self(-1) == -EINVAL, "pinning to CPU -1 was accepted");
    return NULL;
}

static void test_bind(void)
{
    static ld_cpus cpus;
    if (ld_cpus_current(&cpus) != 0)
        return;
    pthread_t t;
    if (pthread_create(&t, NULL, bind_thread, &cpus) == 0)
        pthread_join(t, NULL);
}

static ld_cpus cpu_list(unsigned n, const int *ids)
{
    ld_cpus c = {.n = n};
    memcpy(c.id, ids, n * sizeof *ids);
    return c;
}

/* Rank r's share must be exactly want[0..nwant). */
static void expect_share(const ld_cpus *node, unsigned rank, unsigned local, int want_rc,
                         unsigned nwant, const int *want)
{
    ld_cpus out;
    int rc = ld_cpus_share(node, rank, local, &out);
    int same = rc == want_rc && out.n == nwant &&
               memcmp(out.id, want, nwant * sizeof *want) == 0;
    CHECK(same, "share of rank %u of %u over %u CPUs: rc %d n %u", rank, local, node->n,
          rc, rc >= 0 ? out.n : 0);
}

static void test_share(void)
{
    ld_cpus two = cpu_list(2, (const int[]){0, 1});
    for (unsigned r = 0; r < 4; r++)
        expect_share(&two, r, 4, 1, 1, (const int[]){(int)(r % 2)});
    ld_cpus four = cpu_list(4, (const int[]){0, 1, 2, 3});
    expect_share(&four, 0, 2, 0, 2, (const int[]){0, 1});
    expect_share(&four, 1, 2, 0, 2, (const int[]){2, 3});
    expect_share(&four, 0, 1, 0, 4, (const int[]){0, 1, 2, 3});
    ld_cpus five = cpu_list(5, (const int[]){0, 2, 4, 6, 8});
    expect_share(&five, 0, 2, 0, 3, (const int[]){0, 2, 4});
    expect_share(&five, 1, 2, 0, 2, (const int[]){6, 8});
    expect_share(&five, 2, 3, 0, 1, (const int[]){8});
    ld_cpus out;
    CHECK(ld_cpus_share(&four, 2, 2, &out) == -EINVAL, "rank beyond local accepted");
    CHECK(ld_cpus_share(&four, 0, 0, &out) == -EINVAL, "zero local ranks accepted");
    ld_cpus none = {.n = 0};
    CHECK(ld_cpus_share(&none, 0, 1, &out) == -EINVAL, "an empty node accepted");
}

int main(void)
{
    const char *version = ld_cpus_hwloc_version();
    CHECK(version != NULL && version[0] >= '1' && strchr(version, '.') != NULL,
          "hwloc version \"%s\"", version ? version : "(null)");
    test_share();
    test_bind();
    test_pool();
    test_pool_bad_cpu();
    if (failures != 0) {
        fprintf(stderr, "test_workers_pinning: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_workers_pinning: ok (hwloc %s)\n", version);
    return 0;
}
