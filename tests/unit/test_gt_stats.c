/* test_gt_stats.c: stack-capacity accounting and "trim after K small freezes"
 * (gt_stats.h), in both stack modes (mode.h).
 *
 * Frames are real recursion, each with 1 KiB of locals it fills, sums before it parks
 * and sums again after: a frame a trim or a freeze broke is a failure.
 *
 * - Pooled: one thread parks once 48 frames deep, then 2,000 times 3 frames deep. With
 *   no trim its capacity stays at the deep size at every freeze (mean over 3x what it
 *   uses); trimming after 4 small freezes brings mean and p99 within 2x of what it
 *   uses, once, giving back exactly the deep capacity less the shallow one. Resident
 *   bytes follow while it lives, and drop to 0 once it has ended.
 * - Fresh: 200 threads one after another, each parking once shallow, hold about what
 *   they use; copy mode allocates a spill for each, own stacks reuse one stack.
 * - Growing: parks ever deeper grow a copy-mode spill twice after its first
 *   allocation.
 * - Two threads, deep and shallow in turn, park with trimming after every small
 *   freeze (own mode's yields go through the scheduler then) and without (own mode's go
 *   thread to thread): every freeze is counted, and every frame comes back intact.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gt.h"
#include "gt_stats.h"

#include "check.h"
#include "mode.h"

#define FRAME_WORDS 128 /* 1 KiB of locals a frame */
#define DEEP 48
#define SHALLOW 3
#define SHALLOW_PARKS 2000
#define TRIM_K 4
#define FRESH 200
#define STACK (256u * 1024u)

static long frames_checked;

/* A sum the compiler cannot see through, so the frame's array stays in memory. */
static __attribute__((noinline)) uint64_t checksum(const uint64_t *a, size_t n)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < n; i++)
        sum = sum * 31 + a[i];
    return sum;
}

/* levels frames of 1 KiB, a yield at the bottom, each frame checked on the way up. */
static __attribute__((noinline)) uint64_t dive(unsigned level, unsigned levels,
                                               uint64_t seed)
{
    uint64_t a[FRAME_WORDS], before, below = 0;

    for (size_t i = 0; i < FRAME_WORDS; i++)
        a[i] = (seed + level) * 0x9e3779b97f4a7c15ull + i;
    before = checksum(a, FRAME_WORDS);
    if (level + 1 < levels)
        below = dive(level + 1, levels, seed);
    else
        ld_gt_yield();
    CHECK(checksum(a, FRAME_WORDS) == before, "frame %u of %u changed while parked",
          level, levels);
    frames_checked++;
    return before ^ below;
}

/* What a body saw of its scheduler while it was still alive. */
static ld_gt_stack_stats in_run, after;

typedef struct body_arg {
    ld_sched *s;
} body_arg;

static void pooled(void *arg)
{
    body_arg *b = arg;

    dive(0, DEEP, 1);
    for (unsigned i = 0; i < SHALLOW_PARKS; i++)
        dive(0, SHALLOW, 2 + i);
    ld_sched_stack_stats(b->s, &in_run);
}

/* A scheduler of the test's mode that trims after trim_after small freezes; s is the
 * body's. */
static ld_sched *sched_open(unsigned trim_after)
{
    ld_sched_config cfg = test_config(STACK);
    ld_sched *s = NULL;
    int rc;

    cfg.trim_after = trim_after;
    rc = ld_sched_create(&s, &cfg);
    CHECK(rc == 0, "ld_sched_create: %d", rc);
    return rc == 0 ? s : NULL;
}

/* Run fn on a scheduler of its own to the end; `after` is what the scheduler counted. */
static void run_alone(unsigned trim_after, ld_gt_fn fn)
{
    ld_sched *s = sched_open(trim_after);
    body_arg b = {s};

    if (s == NULL)
        return;
    CHECK(ld_gt_spawn(s, fn, &b, NULL) == 0, "spawn");
    CHECK(ld_sched_run(s) == 0, "run");
    ld_sched_stack_stats(s, &after);
    ld_sched_destroy(s);
}

/* The counts of a thread that parked once deep and SHALLOW_PARKS times shallow. */
static void check_pooled_counts(const ld_gt_stack_stats *st)
{
    CHECK(st->freezes == 1 + SHALLOW_PARKS, "freezes %llu",
          (unsigned long long)st->freezes);
    CHECK(ld_hist_count(&st->capacity) == st->freezes &&
              ld_hist_count(&st->frozen) == st->freezes,
          "histograms hold %llu and %llu freezes",
          (unsigned long long)ld_hist_count(&st->capacity),
          (unsigned long long)ld_hist_count(&st->frozen));
    CHECK(st->chunk_grows == 0, "grows %llu", (unsigned long long)st->chunk_grows);
    if (test_mode == LD_STACK_COPY) {
        /* The deep park allocates the spill; every shallow one fits what is there. */
        CHECK(st->chunk_allocs == 1 && st->chunk_reuses == SHALLOW_PARKS,
              "copy: allocs %llu, reuses %llu", (unsigned long long)st->chunk_allocs,
              (unsigned long long)st->chunk_reuses);
    } else {
        /* A new scheduler's first stack is carved fresh and touched deep once. */
        CHECK(st->chunk_allocs == 1 && st->chunk_reuses == 0,
              "own: allocs %llu, reuses %llu", (unsigned long long)st->chunk_allocs,
              (unsigned long long)st->chunk_reuses);
        CHECK(st->bytes_allocated == ld_hist_max(&st->capacity),
              "own: %llu bytes first touched, deepest capacity %llu",
              (unsigned long long)st->bytes_allocated,
              (unsigned long long)ld_hist_max(&st->capacity));
    }
}

static void test_pooled_untrimmed(void)
{
    const ld_hist *cap = &in_run.capacity, *used = &in_run.frozen;
    uint64_t deep;

    run_alone(0, pooled);
    check_pooled_counts(&in_run);
    deep = ld_hist_max(cap);
    CHECK(ld_hist_quantile(cap, 0.01) >= deep - deep / 64,
          "capacity p1 %llu below the deep %llu",
          (unsigned long long)ld_hist_quantile(cap, 0.01), (unsigned long long)deep);
    CHECK(ld_hist_mean(cap) > 3 * ld_hist_mean(used), "capacity mean %.0f, used %.0f",
          ld_hist_mean(cap), ld_hist_mean(used));
    CHECK(in_run.chunk_trims == 0 && in_run.bytes_trimmed == 0, "trimmed %llu times",
          (unsigned long long)in_run.chunk_trims);
    CHECK(in_run.bytes_resident == deep, "resident %llu, capacity %llu",
          (unsigned long long)in_run.bytes_resident, (unsigned long long)deep);
    CHECK(after.bytes_resident == 0, "resident %llu with no thread left",
          (unsigned long long)after.bytes_resident);
    printf("pooled, no trim: capacity mean %.0f p99 %llu B, used mean %.0f B, resident "
           "%llu B\n",
           ld_hist_mean(cap), (unsigned long long)ld_hist_quantile(cap, 0.99),
           ld_hist_mean(used), (unsigned long long)in_run.bytes_resident);
}

static void test_pooled_trimmed(void)
{
    const ld_hist *cap = &in_run.capacity, *used = &in_run.frozen;
    uint64_t deep;

    run_alone(TRIM_K, pooled);
    check_pooled_counts(&in_run);
    deep = ld_hist_max(cap);
    CHECK(ld_hist_mean(cap) < 2 * ld_hist_mean(used), "capacity mean %.0f, used %.0f",
          ld_hist_mean(cap), ld_hist_mean(used));
    CHECK(ld_hist_quantile(cap, 0.99) < 2 * ld_hist_quantile(used, 0.99),
          "capacity p99 %llu, used p99 %llu",
          (unsigned long long)ld_hist_quantile(cap, 0.99),
          (unsigned long long)ld_hist_quantile(used, 0.99));
    /* The shallow parks sit at one depth: the first TRIM_K of them trim once. */
    CHECK(in_run.chunk_trims == 1, "trims %llu", (unsigned long long)in_run.chunk_trims);
    CHECK(in_run.bytes_trimmed == deep - in_run.bytes_resident,
          "trimmed %llu bytes, deep %llu, resident %llu",
          (unsigned long long)in_run.bytes_trimmed, (unsigned long long)deep,
          (unsigned long long)in_run.bytes_resident);
    CHECK(in_run.bytes_resident < deep / 4, "resident %llu of deep %llu",
          (unsigned long long)in_run.bytes_resident, (unsigned long long)deep);
    CHECK(after.bytes_resident == 0, "resident %llu with no thread left",
          (unsigned long long)after.bytes_resident);
    printf("pooled, trim after %d: capacity mean %.0f p99 %llu B, used mean %.0f B, "
           "resident %llu B, %llu B trimmed\n",
           TRIM_K, ld_hist_mean(cap), (unsigned long long)ld_hist_quantile(cap, 0.99),
           ld_hist_mean(used), (unsigned long long)in_run.bytes_resident,
           (unsigned long long)in_run.bytes_trimmed);
}

static void fresh_one(void *arg)
{
    dive(0, SHALLOW, (uint64_t)(uintptr_t)arg);
}

/* One thread per park, spawned and joined outside any green thread, so that nothing
 * else parks. */
static void test_fresh(void)
{
    ld_sched *s = sched_open(0);
    ld_gt_stack_stats st;
    ld_gt *g;

    if (s == NULL)
        return;
    for (uintptr_t i = 0; i < FRESH; i++) {
        CHECK(ld_gt_spawn(s, fresh_one, (void *)i, &g) == 0, "spawn %zu", (size_t)i);
        CHECK(ld_sched_run(s) == 0, "run");
        CHECK(ld_gt_join(g) == 0, "join");
    }
    ld_sched_stack_stats(s, &st);
    ld_sched_destroy(s);
    CHECK(st.freezes == FRESH, "freezes %llu", (unsigned long long)st.freezes);
    CHECK(ld_hist_mean(&st.capacity) < 2 * ld_hist_mean(&st.frozen),
          "fresh: capacity mean %.0f, used %.0f", ld_hist_mean(&st.capacity),
          ld_hist_mean(&st.frozen));
    if (test_mode == LD_STACK_COPY)
        CHECK(st.chunk_allocs == FRESH && st.chunk_reuses == 0,
              "copy: allocs %llu, reuses %llu", (unsigned long long)st.chunk_allocs,
              (unsigned long long)st.chunk_reuses);
    else
        CHECK(st.chunk_allocs == 1 && st.chunk_reuses == FRESH - 1,
              "own: allocs %llu, reuses %llu", (unsigned long long)st.chunk_allocs,
              (unsigned long long)st.chunk_reuses);
    CHECK(st.bytes_resident == 0, "resident %llu", (unsigned long long)st.bytes_resident);
    printf("fresh: capacity mean %.0f B, used mean %.0f B, %llu B allocated\n",
           ld_hist_mean(&st.capacity), ld_hist_mean(&st.frozen),
           (unsigned long long)st.bytes_allocated);
}

static void growing(void *arg)
{
    (void)arg;
    dive(0, SHALLOW, 1);
    dive(0, 4 * SHALLOW, 2);
    dive(0, DEEP, 3);
}

/* Copy mode allocates once and grows twice; own stacks never grow a chunk, and what
 * they first touched is the deepest capacity. */
static void test_growing(void)
{
    uint64_t deep;

    run_alone(0, growing);
    deep = ld_hist_max(&after.capacity);
    CHECK(after.freezes == 3, "freezes %llu", (unsigned long long)after.freezes);
    if (test_mode == LD_STACK_COPY) {
        CHECK(
            after.chunk_allocs == 1 && after.chunk_grows == 2 && after.chunk_reuses == 0,
            "copy: allocs %llu, grows %llu, reuses %llu",
            (unsigned long long)after.chunk_allocs, (unsigned long long)after.chunk_grows,
            (unsigned long long)after.chunk_reuses);
        /* Three allocations, the last of the deep spill: more than it, less than it
         * and a chunk. */
        CHECK(after.bytes_allocated > deep - LD_GT_STACK_CHUNK &&
                  after.bytes_allocated < 2 * deep,
              "copy: %llu bytes allocated, deepest capacity %llu",
              (unsigned long long)after.bytes_allocated, (unsigned long long)deep);
    } else {
        CHECK(after.chunk_grows == 0 && after.bytes_allocated == deep,
              "own: grows %llu, %llu bytes touched, deepest capacity %llu",
              (unsigned long long)after.chunk_grows,
              (unsigned long long)after.bytes_allocated, (unsigned long long)deep);
    }
}

/* Deep and shallow in turn, twice, beside a shallow neighbour. */
#define TURNS 50
static void turns_deep(void *arg)
{
    (void)arg;
    for (int round = 0; round < 2; round++) {
        dive(0, DEEP, 100 + round);
        for (int i = 0; i < TURNS; i++)
            dive(0, SHALLOW, 200 + i);
    }
}

static void turns_shallow(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2 * (TURNS + 1); i++)
        dive(0, 1, 300 + i);
}

static void test_two_threads(unsigned trim_after)
{
    ld_sched *s = sched_open(trim_after);
    ld_gt_stack_stats st;
    long checked = frames_checked;

    if (s == NULL)
        return;
    CHECK(ld_gt_spawn(s, turns_deep, NULL, NULL) == 0, "spawn");
    CHECK(ld_gt_spawn(s, turns_shallow, NULL, NULL) == 0, "spawn");
    CHECK(ld_sched_run(s) == 0, "run");
    ld_sched_stack_stats(s, &st);
    ld_sched_destroy(s);
    CHECK(st.freezes == 4 * (TURNS + 1), "trim %u: freezes %llu", trim_after,
          (unsigned long long)st.freezes);
    CHECK(frames_checked - checked == 2 * (DEEP + TURNS * SHALLOW) + 2 * (TURNS + 1),
          "trim %u: %ld frames checked", trim_after, frames_checked - checked);
    if (trim_after != 0)
        CHECK(st.chunk_trims >= 2, "trim %u: %llu trims", trim_after,
              (unsigned long long)st.chunk_trims);
    else
        CHECK(st.chunk_trims == 0, "no trim: %llu trims",
              (unsigned long long)st.chunk_trims);
    CHECK(st.bytes_resident == 0, "resident %llu", (unsigned long long)st.bytes_resident);
}

/* Reset keeps the level and forgets the counts. */
static void resetting(void *arg)
{
    body_arg *b = arg;

    dive(0, DEEP, 1);
    ld_sched_stack_stats_reset(b->s);
    ld_sched_stack_stats(b->s, &in_run);
}

static void test_reset(void)
{
    run_alone(0, resetting);
    CHECK(in_run.freezes == 0 && ld_hist_count(&in_run.capacity) == 0 &&
              in_run.bytes_allocated == 0,
          "reset left %llu freezes", (unsigned long long)in_run.freezes);
    CHECK(in_run.bytes_resident > DEEP * FRAME_WORDS * sizeof(uint64_t),
          "reset dropped the level: resident %llu",
          (unsigned long long)in_run.bytes_resident);
    CHECK(after.bytes_resident == 0, "resident %llu",
          (unsigned long long)after.bytes_resident);
}

int main(int argc, char **argv)
{
    test_mode_from_args(argc, argv);
    alarm(60);
    test_pooled_untrimmed();
    test_pooled_trimmed();
    test_fresh();
    test_growing();
    test_two_threads(0);
    test_two_threads(1);
    test_reset();
    if (failures != 0) {
        fprintf(stderr, "test_gt_stats: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_stats (%s): %ld frames came back intact\n",
           test_mode == LD_STACK_COPY ? "copy" : "own", frames_checked);
    return 0;
}
