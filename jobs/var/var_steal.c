/* var_steal.c: fork-join VaR over work-stealing deques, one worker pinned per CPU.
 *
 * The whole range of trades starts on worker 0's deque. A worker that holds a range
 * splits it in halves, pushing the upper half for thieves and keeping the lower, down
 * to single trades; an idle worker steals the oldest, largest range from a victim.
 * This is ForkJoinPool's shape, without its JVM.
 */
#include "deque.h"
#include "workers.h"
#include "var.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

typedef struct steal_run {
    const ld_job_input *in;
    unsigned nworkers;
    ld_deque *deques;
    double **scratch;
    atomic_size_t remaining;
} steal_run;

/* A range [lo, hi) travels through a deque packed into one 64-bit item. */
static uint64_t pack(size_t lo, size_t hi)
{
    return ((uint64_t)lo << 32) | (uint64_t)hi;
}

/* Split down to one trade, leaving the halves for thieves, then value it. */
static void run_range(steal_run *r, unsigned w, size_t lo, size_t hi)
{
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (ld_deque_push(&r->deques[w], pack(mid, hi)) != 0)
            break;
        hi = mid;
    }
    for (size_t i = lo; i < hi; i++)
        ld_var_one(r->in, i, r->scratch[w]);
    atomic_fetch_sub_explicit(&r->remaining, hi - lo, memory_order_release);
}

/* Own work first, newest first; then steal from the others in turn. */
static uint64_t find_work(steal_run *r, unsigned w)
{
    uint64_t item = ld_deque_take(&r->deques[w]);
    for (unsigned k = 1; item == LD_DEQUE_EMPTY && k < r->nworkers; k++)
        item = ld_deque_steal(&r->deques[(w + k) % r->nworkers]);
    return item;
}

static void steal_worker(void *ctx, size_t index, unsigned w)
{
    steal_run *r = ctx;
    (void)index;
    while (atomic_load_explicit(&r->remaining, memory_order_acquire) > 0) {
        uint64_t item = find_work(r, w);
        if (item == LD_DEQUE_EMPTY)
            sched_yield();
        else
            run_range(r, w, (size_t)(item >> 32), (size_t)(item & 0xffffffffu));
    }
}

int ld_var_steal(const ld_job_input *in)
{
    const ld_job_config *cfg = in->cfg;
    ld_cpus cpus;
    ld_job_worker_cpus(cfg, &cpus);
    steal_run r = {.in = in, .nworkers = cpus.n};
    atomic_init(&r.remaining, in->n);
    r.deques = aligned_alloc(64, cpus.n * sizeof *r.deques);
    r.scratch = ld_var_scratch_alloc(in, cpus.n);
    int rc = r.deques && r.scratch ? 0 : -ENOMEM;
    for (unsigned w = 0; rc == 0 && w < cpus.n; w++)
        ld_deque_init(&r.deques[w]);
    ld_workers *pool = NULL;
    if (rc == 0 && in->n > 0 && (rc = ld_workers_create(&pool, &cpus)) == 0) {
        ld_deque_push(&r.deques[0], pack(0, in->n));
        rc = ld_workers_run(pool, cpus.n, steal_worker, &r);
        ld_workers_destroy(pool);
    }
    ld_var_scratch_free(r.scratch, cpus.n);
    free(r.deques);
    return rc;
}
