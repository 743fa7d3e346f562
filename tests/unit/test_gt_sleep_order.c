/* test_gt_sleep_order.c: the scheduler's semantics.
 *
 * - 2,000 green threads sleep distinct multiples of 1 ms, spawned in shuffled order;
 *   they wake in deadline order and never before their deadline.
 * - yield is round-robin; spawn, join and their errors; park and unpark, including an
 *   unpark that comes before its park.
 * - Cross-carrier: ping-pong by unpark between two carriers, an unpark from a thread
 *   with no scheduler, wake-ups queued from one while the carrier is busy (one of them
 *   for a thread that returns first), and ld_gt_mutex mutual exclusion between two
 *   carriers.
 * Every ld_sched_run must return on its own once its green threads are done.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "gt.h"
#include "mode.h"

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            atomic_fetch_add(&failures, 1);                                              \
        }                                                                                \
    } while (0)

#define MS 1000000ull

static atomic_int failures;

/* Create a scheduler on this thread, let setup spawn on it, run it dry, destroy it. */
static void run_sched(void (*setup)(ld_sched *s, void *arg), void *arg)
{
    ld_sched *s = NULL;
    int rc = test_sched_create(&s);

    CHECK(rc == 0, "ld_sched_create: %d", rc);
    if (rc != 0)
        return;
    setup(s, arg);
    rc = ld_sched_run(s);
    CHECK(rc == 0, "ld_sched_run: %d", rc);
    ld_sched_destroy(s);
}

/* A carrier of its own: an OS thread that runs a scheduler set up by `setup`, for the
 * tests across carriers. */
typedef struct carrier_job {
    void (*setup)(ld_sched *s, void *arg);
    void *arg;
} carrier_job;

static void *carrier_main(void *job)
{
    const carrier_job *j = job;

    run_sched(j->setup, j->arg);
    return NULL;
}

/* One spawn on the running thread's scheduler, with a check. */
static ld_gt *spawn(ld_sched *s, ld_gt_fn fn, void *arg, int joinable)
{
    ld_gt *g = NULL;
    int rc = ld_gt_spawn(s, fn, arg, joinable ? &g : NULL);

    CHECK(rc == 0, "ld_gt_spawn: %d", rc);
    return g;
}

/* --- sleep order ------------------------------------------------------------------ */

#define SLEEPERS 2000

typedef struct sleeper {
    uint64_t ns;   /* how long it sleeps */
    uint64_t t0;   /* uv_hrtime just before ld_gt_sleep_ns */
    uint64_t t_up; /* a time after its deadline was fixed (see test_sleep_order) */
    uint64_t woke; /* uv_hrtime just after */
} sleeper;

static sleeper sleepers[SLEEPERS];
static int sleep_wake_order[SLEEPERS], sleep_woken;
static sleeper *sleep_started[SLEEPERS];
static int sleep_starts;

static void sleeper_run(void *arg)
{
    sleeper *x = arg;

    x->t0 = uv_hrtime();
    sleep_started[sleep_starts++] = x;
    ld_gt_sleep_ns(x->ns);
    x->woke = uv_hrtime();
    sleep_wake_order[sleep_woken++] = (int)(x - sleepers);
}

/* A sleep's deadline is fixed at the scheduler's next look at the clock, which comes
 * within LD_GT_BATCH resumes: before the sleeper that starts LD_GT_BATCH starts later
 * has read its t0, since every start is a resume. The last ones are bounded by the
 * marker, spawned last, once its own sleep is over: the look that ended it had fixed
 * every sleep begun before it. */
static void sleep_marker(void *arg)
{
    int i;

    (void)arg;
    ld_gt_sleep_ns(1);
    uint64_t after = uv_hrtime();
    for (i = 0; i < sleep_starts; i++)
        sleep_started[i]->t_up =
            i + LD_GT_BATCH < sleep_starts ? sleep_started[i + LD_GT_BATCH]->t0 : after;
}

/* Sleeper i sleeps perm[i] ms, a shuffle of 1..SLEEPERS, and is spawned in index
 * order, so spawn order and deadline order are unrelated. */
static void sleep_setup(ld_sched *s, void *arg)
{
    int perm[SLEEPERS], i;
    uint32_t rng = 2463534242u;

    (void)arg;
    for (i = 0; i < SLEEPERS; i++)
        perm[i] = i + 1;
    for (i = SLEEPERS - 1; i > 0; i--) {
        int j, t;
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        j = (int)(rng % (uint32_t)(i + 1));
        t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (i = 0; i < SLEEPERS; i++) {
        memset(&sleepers[i], 0, sizeof sleepers[i]);
        sleepers[i].ns = (uint64_t)perm[i] * MS;
        spawn(s, sleeper_run, &sleepers[i], 0);
    }
    spawn(s, sleep_marker, NULL, 0);
}

/* A sleep's timer is armed somewhere in [t0, t_up], for a deadline rounded up to the
 * millisecond. So sleeper a may wake before b only if a's earliest possible deadline
 * is no later than b's latest possible one: t0_a + ns_a <= t_up_b + ns_b + 1 ms. */
static void test_sleep_order(void)
{
    uint64_t late_max = 0;
    int i;

    sleep_woken = 0;
    sleep_starts = 0;
    run_sched(sleep_setup, NULL);
    CHECK(sleep_woken == SLEEPERS, "%d of %d sleepers woke", sleep_woken, SLEEPERS);
    for (i = 0; i < sleep_woken; i++) {
        const sleeper *x = &sleepers[sleep_wake_order[i]];
        uint64_t due = x->t0 + x->ns;
        CHECK(x->woke >= due, "sleeper of %llu ms woke %llu us early",
              (unsigned long long)(x->ns / MS),
              (unsigned long long)(due - x->woke) / 1000);
        if (x->woke > due && x->woke - due > late_max)
            late_max = x->woke - due;
        if (i > 0) {
            const sleeper *a = &sleepers[sleep_wake_order[i - 1]];
            CHECK(a->t0 + a->ns <= x->t_up + x->ns + MS,
                  "wake %d: %llu ms sleeper woke before the %llu ms one", i,
                  (unsigned long long)(a->ns / MS), (unsigned long long)(x->ns / MS));
        }
    }
    /* A margin for CPUs busy with other work (a sleeper 676 ms late beside two pinned
     * busy loops on a loaded 2-CPU machine); a lost wake-up is never woken at all. */
    CHECK(late_max < 2000 * MS, "a sleeper woke %llu ms late",
          (unsigned long long)(late_max / MS));
}

/* --- yield ------------------------------------------------------------------------ */

#define YIELDERS 5
#define YIELD_ROUNDS 4

static int yield_log[YIELDERS * (YIELD_ROUNDS + 1)], yield_logged;

static void yielder(void *arg)
{
    int me = (int)(intptr_t)arg, r;

    for (r = 0; r < YIELD_ROUNDS; r++) {
        yield_log[yield_logged++] = me;
        ld_gt_yield();
    }
    yield_log[yield_logged++] = me;
}

static void yield_setup(ld_sched *s, void *arg)
{
    intptr_t i;

    (void)arg;
    for (i = 0; i < YIELDERS; i++)
        spawn(s, yielder, (void *)i, 0);
}

/* Yield lets every other runnable thread run once: a strict round robin. */
static void test_yield(void)
{
    int i;

    yield_logged = 0;
    run_sched(yield_setup, NULL);
    CHECK(yield_logged == YIELDERS * (YIELD_ROUNDS + 1), "%d entries", yield_logged);
    for (i = 0; i < yield_logged; i++)
        CHECK(yield_log[i] == i % YIELDERS, "entry %d ran thread %d", i, yield_log[i]);
}

/* --- spawn and join --------------------------------------------------------------- */

typedef struct join_state {
    ld_sched *sched;
    ld_gt *spawned_self; /* what a child saw as ld_gt_self() */
    ld_gt *handle;       /* what ld_gt_spawn returned for it */
    ld_gt *detached;
    ld_gt *sleeper;
    int child_done;
    int joiner_rc;
    uint64_t grandchild_id;
    ld_gt *leftover; /* joined from outside any green thread, after the run */
} join_state;

static join_state js;

static void join_child_sleeps(void *arg)
{
    (void)arg;
    js.spawned_self = ld_gt_self();
    ld_gt_sleep_ns(5 * MS);
    js.child_done = 1;
}

static void join_quick(void *arg)
{
    (void)arg;
}

static void join_grandchild(void *arg)
{
    (void)arg;
    js.grandchild_id = ld_gt_id(ld_gt_self());
}

/* A detached thread parks until the parent is done trying to join it. */
static void join_detached(void *arg)
{
    (void)arg;
    js.detached = ld_gt_self();
    ld_gt_park();
}

static void join_long_sleeper(void *arg)
{
    (void)arg;
    ld_gt_sleep_ns(10 * MS);
}

static void join_first_joiner(void *arg)
{
    (void)arg;
    js.joiner_rc = ld_gt_join(js.sleeper);
}

static void join_parent(void *arg)
{
    ld_sched *s = arg;
    ld_gt *g, *quick, *grand;
    uint64_t t0;

    CHECK(ld_sched_run(s) == -EBUSY, "ld_sched_run inside a green thread");
    CHECK(ld_gt_join(ld_gt_self()) == -EINVAL, "self-join");
    CHECK(ld_gt_join(NULL) == -EINVAL, "join NULL");

    /* join waits for the child to return */
    g = spawn(s, join_child_sleeps, NULL, 1);
    js.handle = g;
    t0 = uv_hrtime();
    CHECK(ld_gt_join(g) == 0, "join");
    CHECK(js.child_done == 1, "join returned before the child did");
    CHECK(uv_hrtime() - t0 >= 5 * MS, "join returned after %llu us",
          (unsigned long long)(uv_hrtime() - t0) / 1000);
    CHECK(js.spawned_self == js.handle,
          "ld_gt_self in the child differs from its handle");

    /* a thread that has already returned joins at once */
    quick = spawn(s, join_quick, NULL, 1);
    ld_gt_yield();
    CHECK(ld_gt_join(quick) == 0, "join of a finished thread");

    /* ids: unique, increasing, from any green thread */
    grand = spawn(s, join_grandchild, NULL, 1);
    CHECK(ld_gt_id(grand) > ld_gt_id(ld_gt_self()), "id %llu not above the parent's %llu",
          (unsigned long long)ld_gt_id(grand),
          (unsigned long long)ld_gt_id(ld_gt_self()));
    CHECK(ld_gt_join(grand) == 0, "join grandchild");
    CHECK(js.grandchild_id != 0, "grandchild id");

    /* a detached thread cannot be joined */
    spawn(s, join_detached, NULL, 0);
    ld_gt_yield();
    CHECK(js.detached != NULL, "detached thread did not run");
    CHECK(ld_gt_join(js.detached) == -EINVAL, "join of a detached thread");
    ld_gt_unpark(js.detached);

    /* only one joiner */
    js.sleeper = spawn(s, join_long_sleeper, NULL, 1);
    g = spawn(s, join_first_joiner, NULL, 1);
    ld_gt_yield();
    CHECK(ld_gt_join(js.sleeper) == -EINVAL, "second joiner");
    CHECK(ld_gt_join(g) == 0, "join the first joiner");
    CHECK(js.joiner_rc == 0, "first joiner got %d", js.joiner_rc);

    /* left for the main thread to join after the run */
    js.leftover = spawn(s, join_quick, NULL, 1);
}

static void join_setup(ld_sched *s, void *arg)
{
    ld_sched *again = NULL;
    ld_gt *g;

    (void)arg;
    js.sched = s;
    CHECK(ld_sched_create(&again, NULL) == -EBUSY, "second scheduler on one thread");
    CHECK(ld_gt_self() == NULL, "ld_gt_self outside a green thread");
    CHECK(ld_gt_spawn(s, NULL, NULL, NULL) == -EINVAL, "spawn without fn");
    g = spawn(s, join_parent, s, 1);
    CHECK(ld_gt_join(g) == -EPERM, "join outside a green thread of a running one");
    js.handle = g;
}

static void test_spawn_join(void)
{
    ld_sched *s = NULL;
    ld_gt *parent;

    memset(&js, 0, sizeof js);
    CHECK(test_sched_create(&s) == 0, "create");
    if (s == NULL)
        return;
    join_setup(s, NULL);
    parent = js.handle;
    CHECK(ld_sched_run(s) == 0, "run");
    CHECK(ld_gt_join(parent) == 0, "join a finished thread from outside");
    CHECK(js.leftover != NULL && ld_gt_join(js.leftover) == 0, "join the leftover");
    ld_sched_destroy(s);
}

/* --- park and unpark -------------------------------------------------------------- */

static int park_log[8], park_logged;
static ld_gt *park_target;
static uint64_t park_sleep_t0, park_sleep_woke;

/* Two unparks before two parks leave one permit: the second park waits. */
static void parker(void *arg)
{
    (void)arg;
    park_target = ld_gt_self();
    ld_gt_unpark(ld_gt_self());
    ld_gt_unpark(ld_gt_self());
    ld_gt_park(); /* returns at once: unpark came first */
    park_log[park_logged++] = 1;
    ld_gt_park(); /* the permit is spent: waits for the waker */
    park_log[park_logged++] = 3;
}

static void waker(void *arg)
{
    (void)arg;
    ld_gt_sleep_ns(10 * MS);
    park_log[park_logged++] = 2;
    ld_gt_unpark(park_target);
}

/* An unpark does not cut a sleep short; it is kept for the next park. */
static void sleeping_unparkee(void *arg)
{
    (void)arg;
    park_sleep_t0 = uv_hrtime();
    ld_gt_sleep_ns(20 * MS);
    park_sleep_woke = uv_hrtime();
    ld_gt_park();
}

static void early_unparker(void *arg)
{
    ld_gt_unpark(arg);
}

/* The sleeping thread is joinable, so it is still there to hand back through arg. */
static void park_setup(ld_sched *s, void *arg)
{
    ld_gt **sleeping = arg;

    spawn(s, parker, NULL, 0);
    spawn(s, waker, NULL, 0);
    *sleeping = spawn(s, sleeping_unparkee, NULL, 1);
    spawn(s, early_unparker, *sleeping, 0);
    ld_gt_unpark(NULL);
}

static void test_park_unpark(void)
{
    ld_sched *s = NULL;
    ld_gt *g = NULL;

    park_logged = 0;
    CHECK(test_sched_create(&s) == 0, "create");
    if (s == NULL)
        return;
    park_setup(s, &g);
    CHECK(ld_sched_run(s) == 0, "run");
    CHECK(ld_gt_join(g) == 0, "join");
    ld_sched_destroy(s);
    CHECK(park_logged == 3, "%d entries", park_logged);
    CHECK(park_log[0] == 1 && park_log[1] == 2 && park_log[2] == 3,
          "order %d %d %d: the second park did not wait", park_log[0], park_log[1],
          park_log[2]);
    CHECK(park_sleep_woke - park_sleep_t0 >= 20 * MS, "unpark cut a sleep to %llu us",
          (unsigned long long)(park_sleep_woke - park_sleep_t0) / 1000);
}

/* --- across carriers -------------------------------------------------------------- */

#define XPONG_ROUNDS 2000

/* Two carriers, one green thread each, handing a turn back and forth by unpark. */
typedef struct xpong {
    _Atomic(ld_gt *) player[2];
    atomic_long turn;
    atomic_int spawn_elsewhere_rc;
    ld_sched *sched[2];
    atomic_int sched_ready;
} xpong;

static xpong xp;

static ld_gt *xpong_partner(int me)
{
    ld_gt *other;

    while ((other = atomic_load(&xp.player[1 - me])) == NULL)
        ld_gt_sleep_ns(MS);
    return other;
}

static void xpong_player(void *arg)
{
    int me = (int)(intptr_t)arg, i;
    ld_gt *other;

    atomic_store(&xp.player[me], ld_gt_self());
    other = xpong_partner(me);
    if (me == 1)
        ld_gt_unpark(other); /* player 0 moves first */
    for (i = 0; i < XPONG_ROUNDS; i++) {
        long t;
        ld_gt_park();
        t = atomic_fetch_add(&xp.turn, 1);
        if (t % 2 != me) {
            CHECK(0, "player %d moved on turn %ld", me, t);
            return;
        }
        if (me == 0 || i < XPONG_ROUNDS - 1)
            ld_gt_unpark(other); /* player 1's last turn: player 0 has returned */
    }
}

static void xpong_setup(ld_sched *s, void *arg)
{
    int me = (int)(intptr_t)arg;

    xp.sched[me] = s;
    atomic_fetch_add(&xp.sched_ready, 1);
    while (atomic_load(&xp.sched_ready) < 2)
        sched_yield();
    /* spawning on another carrier's scheduler is refused */
    atomic_store(&xp.spawn_elsewhere_rc,
                 ld_gt_spawn(xp.sched[1 - me], join_quick, NULL, NULL));
    spawn(s, xpong_player, arg, 0);
}

static void test_cross_carrier_unpark(void)
{
    pthread_t t[2];
    carrier_job job[2];
    intptr_t i;

    memset(&xp, 0, sizeof xp);
    for (i = 0; i < 2; i++) {
        job[i] = (carrier_job){xpong_setup, (void *)i};
        CHECK(pthread_create(&t[i], NULL, carrier_main, &job[i]) == 0, "thread");
    }
    for (i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&xp.turn) == 2 * XPONG_ROUNDS, "turns %ld", atomic_load(&xp.turn));
    CHECK(atomic_load(&xp.spawn_elsewhere_rc) == -EPERM, "foreign spawn: %d",
          atomic_load(&xp.spawn_elsewhere_rc));
}

/* An unpark from a thread that has no scheduler at all. */
static _Atomic(ld_gt *) lone_parked;
static atomic_int lone_woke;

static void lone_parker(void *arg)
{
    (void)arg;
    atomic_store(&lone_parked, ld_gt_self());
    ld_gt_park();
    atomic_store(&lone_woke, 1);
}

static void lone_setup(ld_sched *s, void *arg)
{
    (void)arg;
    spawn(s, lone_parker, NULL, 0);
}

static void test_unpark_from_plain_thread(void)
{
    pthread_t t;
    carrier_job job = {lone_setup, NULL};
    ld_gt *g;

    atomic_store(&lone_parked, NULL);
    atomic_store(&lone_woke, 0);
    CHECK(pthread_create(&t, NULL, carrier_main, &job) == 0, "thread");
    while ((g = atomic_load(&lone_parked)) == NULL)
        sched_yield();
    usleep(20000); /* most likely parked by now; an earlier unpark is kept anyway */
    CHECK(atomic_load(&lone_woke) == 0, "woke without an unpark");
    ld_gt_unpark(g);
    pthread_join(t, NULL);
    CHECK(atomic_load(&lone_woke) == 1, "not woken");
}

/* --- the remote queue ------------------------------------------------------------ */

/* Wake-ups posted from another thread while the carrier is busy queue up, and a
 * thread that returns with one still queued, between two others, leaves the queue
 * without taking the others' wake-ups with it. */
static struct {
    ld_gt *_Atomic first, *_Atomic middle, *_Atomic last;
    atomic_int asked, posted, woke, middle_ran;
} rq;

static void rq_parker(void *arg)
{
    ld_gt *_Atomic *self = arg;

    atomic_store(self, ld_gt_self());
    ld_gt_park();
    atomic_fetch_add(&rq.woke, 1);
}

static void rq_returner(void *arg)
{
    (void)arg;
    atomic_store(&rq.middle_ran, 1);
}

/* Runs once both parkers have parked. It holds the carrier until all three wake-ups
 * are posted, so none is collected yet, then joins the returner, which runs next and
 * returns while its wake-up sits between the parkers'. */
static void rq_holder(void *arg)
{
    ld_gt *middle = spawn(arg, rq_returner, NULL, 1);

    atomic_store(&rq.middle, middle);
    atomic_store(&rq.asked, 1);
    while (!atomic_load(&rq.posted))
        ;
    CHECK(ld_gt_join(middle) == 0, "join");
}

static void rq_setup(ld_sched *s, void *arg)
{
    (void)arg;
    spawn(s, rq_parker, &rq.first, 0);
    spawn(s, rq_parker, &rq.last, 0);
    spawn(s, rq_holder, s, 0);
}

static void test_remote_queue(void)
{
    pthread_t t;
    carrier_job job = {rq_setup, NULL};

    CHECK(pthread_create(&t, NULL, carrier_main, &job) == 0, "thread");
    while (!atomic_load(&rq.asked))
        sched_yield();
    ld_gt_unpark(atomic_load(&rq.first));
    ld_gt_unpark(atomic_load(&rq.middle));
    ld_gt_unpark(atomic_load(&rq.last));
    ld_gt_unpark(atomic_load(&rq.first)); /* merges with the first's entry */
    atomic_store(&rq.posted, 1);
    pthread_join(t, NULL);
    CHECK(atomic_load(&rq.middle_ran) == 1, "the returner did not run");
    CHECK(atomic_load(&rq.woke) == 2, "%d of 2 parkers woke", atomic_load(&rq.woke));
}

/* --- ld_gt_mutex across carriers -------------------------------------------------- */

#define MUTEX_THREADS 8
#define MUTEX_ROUNDS 500

static ld_gt_mutex *mx;
static atomic_int mx_inside;
static long mx_counter; /* guarded by mx only */

/* The holder yields inside the lock, so others on both carriers contend for it. */
static void mutex_worker(void *arg)
{
    int i;

    (void)arg;
    for (i = 0; i < MUTEX_ROUNDS; i++) {
        ld_gt_mutex_lock(mx);
        if (atomic_fetch_add(&mx_inside, 1) != 0)
            CHECK(0, "two holders at once");
        mx_counter++;
        ld_gt_yield();
        atomic_fetch_sub(&mx_inside, 1);
        ld_gt_mutex_unlock(mx);
        if (i % 7 == 0)
            ld_gt_yield();
    }
}

static void mutex_setup(ld_sched *s, void *arg)
{
    int i;

    (void)arg;
    for (i = 0; i < MUTEX_THREADS; i++)
        spawn(s, mutex_worker, NULL, 0);
}

static void test_mutex_two_carriers(void)
{
    pthread_t t[2];
    carrier_job job = {mutex_setup, NULL};
    int i;

    CHECK(ld_gt_mutex_create(&mx) == 0, "mutex");
    mx_counter = 0;
    for (i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, carrier_main, &job) == 0, "thread");
    for (i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK(mx_counter == 2L * MUTEX_THREADS * MUTEX_ROUNDS, "counter %ld, want %ld",
          mx_counter, 2L * MUTEX_THREADS * MUTEX_ROUNDS);
    ld_gt_mutex_destroy(mx);
}

int main(int argc, char **argv)
{
    test_mode_from_args(argc, argv);
    alarm(30); /* a hang fails the test instead of waiting for CTest's timeout */
    test_yield();
    test_spawn_join();
    test_park_unpark();
    test_cross_carrier_unpark();
    test_unpark_from_plain_thread();
    test_remote_queue();
    test_mutex_two_carriers();
    test_sleep_order();
    if (atomic_load(&failures) != 0) {
        fprintf(stderr, "test_gt_sleep_order: %d failure(s)\n", atomic_load(&failures));
        return 1;
    }
    printf("test_gt_sleep_order: ok\n");
    return 0;
}
