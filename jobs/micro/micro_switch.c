/* micro_switch.c: one green-thread switch against one ucontext swapcontext.
 *
 * Two green threads hand the carrier to each other with ld_gt_yield; each hand-over is
 * one switch, straight from thread to thread with stacks of their own. In copy mode
 * the same hand-over goes through the scheduler, which freezes one thread's frames
 * and thaws the other's: that is its price. Two ucontexts hand the carrier to each
 * other with swapcontext, which also saves the signal mask with a system call. The
 * best of a few repetitions of each, interleaved, stands for each.
 */
#include "metrics.h"
#include "micro.h"

#include <errno.h>
#include <stdlib.h>
#include <ucontext.h>

#define SWITCH_ROUNDS 200000L
#define SWITCH_REPS 5
#define UC_STACK (64 * 1024)

typedef struct yield_pair {
    int64_t ns; /* the pair's wall time */
} yield_pair;

static void yielder(void *arg)
{
    (void)arg;
    for (long i = 0; i < SWITCH_ROUNDS; i++)
        ld_gt_yield();
}

/* Two yielders alternate: 2 * SWITCH_ROUNDS switches between them. */
static void green_pair(ld_sched *s, void *arg)
{
    yield_pair *p = arg;
    ld_gt *a, *b;
    int64_t t0 = ld_now_ns();
    if (ld_gt_spawn(s, yielder, NULL, &a) != 0)
        return;
    if (ld_gt_spawn(s, yielder, NULL, &b) != 0) {
        ld_gt_join(a);
        return;
    }
    ld_gt_join(a);
    ld_gt_join(b);
    p->ns = ld_now_ns() - t0;
}

static ucontext_t uc_main, uc_peer;

static void uc_bounce(void)
{
    for (;;)
        swapcontext(&uc_peer, &uc_main);
}

/* There and back SWITCH_ROUNDS times: 2 * SWITCH_ROUNDS switches. */
static int64_t ucontext_pair(void *stack)
{
    getcontext(&uc_peer);
    uc_peer.uc_stack.ss_sp = stack;
    uc_peer.uc_stack.ss_size = UC_STACK;
    uc_peer.uc_link = NULL;
    makecontext(&uc_peer, uc_bounce, 0);
    int64_t t0 = ld_now_ns();
    for (long i = 0; i < SWITCH_ROUNDS; i++)
        swapcontext(&uc_main, &uc_peer);
    return ld_now_ns() - t0;
}

/* One pair of yielders in `mode`; the best wall time so far stays in *best. */
static int green_best(enum ld_stack_mode mode, int64_t *best)
{
    ld_sched_config cfg = {.mode = mode};
    yield_pair p = {.ns = 0};
    int rc = ld_micro_run_green(&cfg, green_pair, &p);
    if (rc == 0 && p.ns == 0)
        rc = -ENOMEM;
    if (p.ns && p.ns < *best)
        *best = p.ns;
    return rc;
}

int ld_micro_switch(const ld_job_input *in)
{
    void *stack = malloc(UC_STACK);
    if (!stack)
        return -ENOMEM;
    int64_t green = INT64_MAX, copy = INT64_MAX, uc = INT64_MAX;
    int copies = ld_stack_mode_supported(LD_STACK_COPY);
    int rc = 0;
    for (int r = 0; rc == 0 && r < SWITCH_REPS; r++) {
        rc = green_best(LD_STACK_OWN, &green);
        if (rc == 0 && copies)
            rc = green_best(LD_STACK_COPY, &copy);
        int64_t u = ucontext_pair(stack);
        if (u < uc)
            uc = u;
    }
    free(stack);
    if (rc)
        return rc;
    double g_ns = (double)green / (2.0 * SWITCH_ROUNDS);
    double u_ns = (double)uc / (2.0 * SWITCH_ROUNDS);
    ld_figure_add(in->figures, "green_ns", g_ns, "ns");
    ld_figure_add(in->figures, "ucontext_ns", u_ns, "ns");
    ld_figure_add(in->figures, "speedup", u_ns / g_ns, "x");
    if (copies)
        ld_figure_add(in->figures, "copy_ns", (double)copy / (2.0 * SWITCH_ROUNDS), "ns");
    return 0;
}
