/* test_gt_uv_wake.c: a green thread woken by a libuv callback that runs at the top of
 * the scheduler's blocking uv_run (a timer already due) must run, not wait forever
 * behind a loop that goes on to block. An alarm turns a hang into a failure. */
#include <stdio.h>
#include <unistd.h>
#include <uv.h>

#include "gt.h"
#include "mode.h"

#define ROUNDS 200

typedef struct waker {
    uv_timer_t timer; /* first, so the handle's address is the waker's */
    ld_sched *s;
    ld_gt *g;
    int woken;
} waker;

static void on_timer(uv_timer_t *t)
{
    waker *w = (waker *)t;
    w->woken++;
    ld_gt_unpark(w->g);
}

static void on_close(uv_handle_t *h)
{
    ld_gt_unpark(((waker *)h)->g);
}

/* A zero timeout is due at once: libuv runs it before it polls, inside uv_run. */
static void sleeper(void *arg)
{
    waker *w = arg;
    w->g = ld_gt_self();
    uv_timer_init(ld_sched_loop(w->s), &w->timer);
    for (int k = 0; k < ROUNDS; k++) {
        uv_timer_start(&w->timer, on_timer, 0, 0);
        ld_gt_park();
    }
    uv_close((uv_handle_t *)&w->timer, on_close);
    ld_gt_park();
}

int main(int argc, char **argv)
{
    test_mode_from_args(argc, argv);
    alarm(20);
    ld_sched *s;
    if (test_sched_create(&s) != 0) {
        fprintf(stderr, "FAIL: no scheduler\n");
        return 1;
    }
    waker w = {.s = s};
    int rc = ld_gt_spawn(s, sleeper, &w, NULL);
    rc = rc ? rc : ld_sched_run(s);
    ld_sched_destroy(s);
    if (rc != 0 || w.woken != ROUNDS) {
        fprintf(stderr, "FAIL: rc %d, woken %d of %d\n", rc, w.woken, ROUNDS);
        return 1;
    }
    printf("%d wake-ups from due libuv timers, none lost\n", ROUNDS);
    return 0;
}
