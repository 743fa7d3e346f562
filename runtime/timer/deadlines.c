/* deadlines.c: a timing wheel on a uv_loop, woken by one timerfd.
 *
 * The wheel (gt_wheel.h) holds the deadlines and knows no clock. A uv_prepare handle,
 * which libuv runs just before it polls, sets the timerfd to the wheel's next tick
 * rounded up to a wake-up window; a uv_poll handle on the timerfd wakes the loop, and
 * its callback fires what is due. Setting a timerfd also clears its readiness, so it
 * is never read. Spans (ld_deadlines_add_after) wait in an array until the next look
 * at the clock, whoever makes it, turns them into deadlines.
 */
#include "deadlines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "gt_wheel.h"

_Static_assert(LD_DEADLINES_TICK_NS == 1u << LD_WHEEL_TICK_SHIFT,
               "deadlines.h states the wheel's tick");

struct ld_deadlines {
    ld_wheel wheel;
    ld_wheel_fire wheel_fire; /* the owner's fire_n, or deadlines_fire_each */
    void *wheel_ctx;          /* its ctx: the owner's, or the set */
    ld_deadline_fire fire;    /* ld_deadlines_open's */
    void *ctx;
    uv_poll_t poll;       /* readable once timer_fd has expired */
    uv_prepare_t prepare; /* sets timer_fd before the loop polls */
    ld_wheel_span *later; /* added by ld_deadlines_add_after since the last look */
    size_t later_n, later_cap;
    size_t later_room; /* spans an add may append unchecked; 0 after a look and an add */
    int timer_fd;
    int handles;       /* handles not yet closed, so the last close frees the set */
    uint64_t armed_ns; /* when timer_fd expires; UINT64_MAX: disarmed */
    uint64_t woke_ns;  /* when timer_fd last woke the loop; 0: never */
    bool fired;        /* timer_fd expired since it was last set */
};

/* The spans added since the last look are fixed at this one, now_ns, a reading taken
 * after each was added: none can fire early. No add below fails: every add reserves
 * room in the wheel for the spans too, and each span is due after the wheel's clock
 * (ns > 0, and a now_ns no older than the last look's; the floor keeps a caller's
 * stale reading from dropping a span). */
static void deadlines_fix(ld_deadlines *d, uint64_t now_ns)
{
    ld_wheel_add_spans(&d->wheel, d->later, d->later_n, now_ns);
    d->later_n = 0;
    d->later_room = 0;
}

/* The poll handle is what keeps the loop alive, exactly while deadlines are pending. */
void ld_deadlines_expire(ld_deadlines *d, uint64_t now_ns)
{
    deadlines_fix(d, now_ns);
    if (d->wheel.count == 0)
        return;
    ld_wheel_advance(&d->wheel, ld_wheel_tick_floor(now_ns), d->wheel_fire, d->wheel_ctx);
    if (d->wheel.count == 0 && d->later_n == 0)
        uv_unref((uv_handle_t *)&d->poll);
}

/* Room in the wheel for every deadline and span held, plus `more`. */
static int deadlines_reserve(ld_deadlines *d, size_t more)
{
    return ld_wheel_reserve(&d->wheel, d->wheel.count + d->later_n + more);
}

int ld_deadlines_add(ld_deadlines *d, void *item, uint64_t at_ns)
{
    int rc = deadlines_reserve(d, 1);

    d->later_room = 0; /* worked out for the wheel's count before this */
    if (rc == 0)
        rc = ld_wheel_add(&d->wheel, item, ld_wheel_tick_ceil(at_ns));
    if (rc == 0)
        uv_ref((uv_handle_t *)&d->poll);
    return rc;
}

/* An add that must grow the spans' array or the wheel, or is the first since the last
 * look or the last ld_deadlines_add: the poll handle is referenced while anything is
 * pending, and an expire unreferences it only once no span is left, so only the first
 * span since a look may find it unreferenced. It works out how many spans may follow
 * with no check at all: as many as both the array and the wheel have room for. The
 * wheel's room only grows until the next look (firing lowers its count; a look moves
 * the spans into it), so the figure holds until then, but for an absolute add. */
static __attribute__((noinline)) int deadlines_add_after_slow(ld_deadlines *d, void *item,
                                                              uint64_t ns)
{
    size_t wheel_room;

    if (d->later_n == d->later_cap) {
        size_t cap = d->later_cap != 0 ? 2 * d->later_cap : 256;
        ld_wheel_span *later = realloc(d->later, cap * sizeof *later);
        if (later == NULL)
            return -ENOMEM;
        d->later = later;
        d->later_cap = cap;
    }
    if (deadlines_reserve(d, 1) != 0)
        return -ENOMEM;
    uv_ref((uv_handle_t *)&d->poll);
    d->later[d->later_n++] = (ld_wheel_span){item, ns};
    wheel_room = ld_wheel_room(&d->wheel, d->wheel.count + d->later_n);
    d->later_room =
        d->later_cap - d->later_n < wheel_room ? d->later_cap - d->later_n : wheel_room;
    return 0;
}

/* The spans are kept in one array, reused from look to look. An add within the room
 * the last checked one found only appends, and calls nothing. */
int ld_deadlines_add_after(ld_deadlines *d, void *item, uint64_t ns)
{
    if (ns == 0)
        return 1;
    if (d->later_room == 0)
        return deadlines_add_after_slow(d, item, ns);
    d->later_room--;
    d->later[d->later_n++] = (ld_wheel_span){item, ns};
    return 0;
}

size_t ld_deadlines_pending(const ld_deadlines *d)
{
    return d->wheel.count + d->later_n;
}

/* When the loop should wake for the wheel's next tick: at that tick, but no sooner than
 * a window after the timer's last wake-up. Deadlines a few µs apart then share one
 * wake-up a window, while a deadline after a quiet spell, the only one of its window,
 * is woken for on its tick: it costs the same one wake-up either way. */
static uint64_t deadlines_wake_ns(const ld_deadlines *d)
{
    uint64_t next = ld_wheel_next(&d->wheel);
    uint64_t at, soonest = d->woke_ns + LD_DEADLINES_WAKE_NS;

    if (next == UINT64_MAX)
        return UINT64_MAX;
    at = next << LD_WHEEL_TICK_SHIFT;
    return at > soonest ? at : soonest;
}

/* Before the loop polls, the spans added since the last look are fixed, on a reading
 * of the clock taken now: one read a turn instead of one an add. A timer set for an
 * earlier wake-up than needed is left as it is: it wakes the loop once too often,
 * which is cheaper than setting it every turn. One that fired is always set again, if
 * only to clear its readiness. */
static void deadlines_on_prepare(uv_prepare_t *h)
{
    ld_deadlines *d = h->data;
    struct itimerspec its = {{0, 0}, {0, 0}};
    uint64_t at;

    if (d->later_n != 0)
        deadlines_fix(d, uv_hrtime());
    at = deadlines_wake_ns(d);
    if (!d->fired && at >= d->armed_ns)
        return;
    d->armed_ns = at;
    d->fired = false;
    if (at != UINT64_MAX) {
        its.it_value.tv_sec = (time_t)(at / 1000000000u);
        its.it_value.tv_nsec = (long)(at % 1000000000u);
    }
    timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The timer expired: fire what is due; the next prepare sets the timer again. */
static void deadlines_on_timer(uv_poll_t *h, int status, int events)
{
    ld_deadlines *d = h->data;

    (void)status;
    (void)events;
    d->fired = true;
    d->woke_ns = uv_hrtime();
    ld_deadlines_expire(d, d->woke_ns);
}

/* The last handle's close frees the set, and the timerfd with it. */
static void deadlines_on_close(uv_handle_t *h)
{
    ld_deadlines *d = h->data;

    if (--d->handles != 0)
        return;
    close(d->timer_fd);
    ld_wheel_fini(&d->wheel);
    free(d->later);
    free(d);
}

void ld_deadlines_close(ld_deadlines *d)
{
    ld_wheel_halt(&d->wheel); /* none fires once the set is closing */
    uv_close((uv_handle_t *)&d->poll, deadlines_on_close);
    uv_close((uv_handle_t *)&d->prepare, deadlines_on_close);
}

/* The handles are made last: until uv_poll_init has succeeded nothing is on the loop,
 * and neither start can fail for a valid handle and callback. Both start unreferenced,
 * since an empty set must not keep the loop alive. */
static int deadlines_start(ld_deadlines *d, uv_loop_t *loop)
{
    int rc = uv_poll_init(loop, &d->poll, d->timer_fd);

    if (rc != 0)
        return rc;
    d->poll.data = d;
    d->prepare.data = d;
    uv_prepare_init(loop, &d->prepare);
    d->handles = 2;
    uv_poll_start(&d->poll, UV_READABLE, deadlines_on_timer);
    uv_prepare_start(&d->prepare, deadlines_on_prepare);
    uv_unref((uv_handle_t *)&d->poll);
    uv_unref((uv_handle_t *)&d->prepare);
    return 0;
}

/* The set d, allocated and told how to fire, started on loop; freed on failure. */
static int deadlines_open(ld_deadlines **out, uv_loop_t *loop, ld_deadlines *d)
{
    int rc;

    d->armed_ns = UINT64_MAX;
    d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (d->timer_fd < 0) {
        rc = -errno;
        free(d);
        return rc;
    }
    ld_wheel_init(&d->wheel, ld_wheel_tick_floor(uv_hrtime()));
    rc = deadlines_start(d, loop);
    if (rc != 0) {
        close(d->timer_fd);
        free(d);
        return rc;
    }
    *out = d;
    return 0;
}

/* An owner that takes deadlines one at a time: a block fires item by item, and none
 * once the set is closing. Its items are prefetched together first, a hint that never
 * faults, so the misses fire is about to take on them overlap rather than queue. */
static void deadlines_fire_each(void *const *items, size_t n, void *ctx)
{
    ld_deadlines *d = ctx;
    size_t i;

    for (i = 0; i < n; i++)
        __builtin_prefetch(items[i]);
    for (i = 0; i < n && !d->wheel.halted; i++)
        d->fire(items[i], d->ctx);
}

int ld_deadlines_open(ld_deadlines **out, uv_loop_t *loop, ld_deadline_fire fire,
                      void *ctx)
{
    ld_deadlines *d;

    if (out == NULL || loop == NULL || fire == NULL)
        return -EINVAL;
    d = calloc(1, sizeof *d);
    if (d == NULL)
        return -ENOMEM;
    d->fire = fire;
    d->ctx = ctx;
    d->wheel_fire = deadlines_fire_each;
    d->wheel_ctx = d;
    return deadlines_open(out, loop, d);
}

int ld_deadlines_open_n(ld_deadlines **out, uv_loop_t *loop, ld_deadline_fire_n fire_n,
                        void *ctx)
{
    ld_deadlines *d;

    if (out == NULL || loop == NULL || fire_n == NULL)
        return -EINVAL;
    d = calloc(1, sizeof *d);
    if (d == NULL)
        return -ENOMEM;
    d->wheel_fire = fire_n;
    d->wheel_ctx = ctx;
    return deadlines_open(out, loop, d);
}
