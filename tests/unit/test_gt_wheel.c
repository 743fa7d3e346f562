/* test_gt_wheel.c: the timing wheel fires every item exactly at its tick, in deadline
 * order and FIFO within a tick, whatever the spread of deadlines (near, across level
 * boundaries, decades away) and however the clock is advanced (tick by tick, in jumps
 * to the next event, or past many events at once); items added by fire callbacks fire
 * at their tick too; items are handed back without being read; advance never grows the
 * wheel; and fini frees everything, drained or not (run under valgrind to see it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_wheel.h"

#define N 50000

typedef struct item {
    uint64_t due; /* the tick it was last added for: the wheel keeps its own copy */
    uint64_t fired_at;
    long order;
    int fired;
} item;

static ld_wheel wheel;
static item items[N];
static long fired_count;
static uint64_t last_tick; /* of the latest firing: firings never go back in time */
static int failures;

/* The wheel fires the items due in one tick a block at a time; the checks below take
 * them one at a time, as fn(item, ctx), in the order the block gives them. */
typedef struct each {
    void (*fn)(void *item, void *ctx);
    void *ctx;
} each;

static void fire_each(void *const *fired, size_t n, void *ctx)
{
    const each *e = ctx;
    size_t i;

    for (i = 0; i < n; i++)
        e->fn(fired[i], e->ctx);
}

/* Records when and in which order an item fired, and that the clock never went back. */
static void on_fire(void *p, void *ctx)
{
    item *it = p;

    (void)ctx;
    if (wheel.now < last_tick) {
        fprintf(stderr, "fired at %llu after a firing at %llu\n",
                (unsigned long long)wheel.now, (unsigned long long)last_tick);
        failures++;
    }
    last_tick = wheel.now;
    it->fired++;
    it->fired_at = wheel.now;
    it->order = fired_count++;
}

static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 17;
}

/* One round: random deadlines from `start`, advanced by `mode`. */
static void round_trip(uint64_t start, int mode, uint64_t seed)
{
    uint64_t s = seed, now = start;
    int exact = mode != 1; /* random steps may overshoot a deadline; jumps may not */
    size_t owned;

    ld_wheel_init(&wheel, start);
    fired_count = 0;
    last_tick = start;
    for (long i = 0; i < N; i++) {
        uint64_t d = start + 1 + rnd(&s) % 70000;
        if (i % 7 == 0)
            d = start + 1 + rnd(&s) % (1ull << 40);
        if (i % 1000 == 0)
            d = start + 1 + (rnd(&s) << 20);
        items[i] = (item){.due = d};
        if (ld_wheel_add(&wheel, &items[i], d) != 0) {
            fprintf(stderr, "add of a future deadline refused\n");
            failures++;
        }
    }
    owned = wheel.owned;
    while (wheel.count != 0) {
        uint64_t next = ld_wheel_next(&wheel);
        if (next < now) {
            fprintf(stderr, "next %llu is before the clock %llu\n",
                    (unsigned long long)next, (unsigned long long)now);
            failures++;
            break;
        }
        now = mode == 0 ? next : mode == 1 ? now + 1 + rnd(&s) % 5000 : next + 3;
        ld_wheel_advance(&wheel, now, fire_each, &(each){on_fire, NULL});
        if (wheel.owned != owned) {
            fprintf(stderr, "advance grew the wheel from %zu to %zu blocks\n", owned,
                    wheel.owned);
            failures++;
            break;
        }
        if (mode == 1 && now - start > (1ull << 22))
            mode = 0; /* past the dense part, jump */
    }
    ld_wheel_fini(&wheel);
    for (long i = 0; i < N; i++) {
        const item *it = &items[i];
        if (it->fired != 1 || it->fired_at < it->due ||
            (exact && it->fired_at > it->due + 3)) {
            fprintf(stderr, "item %ld due %llu fired %d times at %llu\n", i,
                    (unsigned long long)it->due, it->fired,
                    (unsigned long long)it->fired_at);
            failures++;
            return;
        }
    }
}

/* Items due in one tick fire in the order they were added; an earlier deadline always
 * fires first; a deadline already passed is refused, to be treated as fired. */
static void ordering(void)
{
    ld_wheel_init(&wheel, 1000);
    fired_count = 0;
    last_tick = 1000;
    for (long i = 0; i < 10; i++) {
        items[i] = (item){.due = i < 5 ? 1300 : 1200};
        ld_wheel_add(&wheel, &items[i], items[i].due);
    }
    items[10] = (item){0};
    if (ld_wheel_add(&wheel, &items[10], 1000) != 1) {
        fprintf(stderr, "a deadline at the clock was accepted\n");
        failures++;
    }
    ld_wheel_advance(&wheel, 5000, fire_each, &(each){on_fire, NULL});
    for (long i = 0; i < 10; i++) {
        long want = i < 5 ? 5 + i : i - 5;
        if (items[i].order != want) {
            fprintf(stderr, "item %ld fired %ld-th, not %ld-th\n", i, items[i].order,
                    want);
            failures++;
        }
    }
    if (ld_wheel_next(&wheel) != UINT64_MAX) {
        fprintf(stderr, "an empty wheel has work\n");
        failures++;
    }
    ld_wheel_fini(&wheel);
}

/* Fires at exactly the item's tick, then, the first time, adds the item again: a
 * deadline at the clock is refused, a later one (near, into level 0, or far, across
 * levels) is taken. ctx is the random state. */
static void on_fire_again(void *p, void *ctx)
{
    item *it = p;
    uint64_t r;

    if (wheel.now != it->due || wheel.now < last_tick) {
        fprintf(stderr, "item due %llu fired at %llu\n", (unsigned long long)it->due,
                (unsigned long long)wheel.now);
        failures++;
    }
    last_tick = wheel.now;
    if (++it->fired != 1)
        return;
    r = rnd(ctx);
    it->due = wheel.now + 1 + (r & 1 ? r % 300 : r % (1ull << 30));
    if (ld_wheel_add(&wheel, it, wheel.now) != 1 ||
        ld_wheel_add(&wheel, it, it->due) != 0) {
        fprintf(stderr, "add from a fire callback misjudged\n");
        failures++;
    }
}

/* Every item fires twice, the second time for the add its first firing made, whether
 * the clock jumps from event to event or passes them all in one call. */
static void readd(uint64_t start, int one_call, uint64_t seed)
{
    uint64_t s = seed;

    ld_wheel_init(&wheel, start);
    last_tick = start;
    for (long i = 0; i < N; i++) {
        items[i] = (item){.due = start + 1 + rnd(&s) % (i % 5 == 0 ? 1u << 24 : 70000)};
        ld_wheel_add(&wheel, &items[i], items[i].due);
    }
    if (one_call)
        ld_wheel_advance(&wheel, start + (1ull << 40), fire_each,
                         &(each){on_fire_again, &s});
    while (wheel.count != 0)
        ld_wheel_advance(&wheel, ld_wheel_next(&wheel), fire_each,
                         &(each){on_fire_again, &s});
    ld_wheel_fini(&wheel);
    for (long i = 0; i < N; i++) {
        if (items[i].fired != 2) {
            fprintf(stderr, "re-added item %ld fired %d times\n", i, items[i].fired);
            failures++;
            return;
        }
    }
}

/* Tokens that point into page 0 come back in deadline order, once each. */
static void on_fire_token(void *p, void *ctx)
{
    uintptr_t *want = ctx;

    if ((uintptr_t)p != *want) {
        fprintf(stderr, "token %zu fired, not %zu\n", (size_t)(uintptr_t)p,
                (size_t)*want);
        failures++;
    }
    *want = (uintptr_t)p + 1;
}

/* The wheel never reads an item: pointers that would fault are handed back intact. */
static void opaque(void)
{
    uintptr_t want = 1;

    ld_wheel_init(&wheel, 77);
    for (uintptr_t i = 0; i < 1000; i++) {
        uintptr_t token = i * 7 % 1000 + 1;
        ld_wheel_add(&wheel, (void *)token, 77 + token * 37);
    }
    ld_wheel_advance(&wheel, 77 + 1000 * 37, fire_each, &(each){on_fire_token, &want});
    if (want != 1001 || wheel.count != 0) {
        fprintf(stderr, "tokens stopped at %zu\n", (size_t)want);
        failures++;
    }
    ld_wheel_fini(&wheel);
}

/* A reservation holds for exactly what it promised: after ld_wheel_reserve(count),
 * count adds in as many slots as the wheel has, and the cascades and firings that
 * follow, take no block beyond those owned (the comparison at each add must neither
 * grow the wheel early nor let it run short), for counts on both sides of the slot
 * count, where the bound changes form. */
static void reserved(void)
{
    static const size_t counts[] = {1,
                                    15,
                                    16,
                                    100,
                                    LD_WHEEL_SLOTS_ALL - 1,
                                    LD_WHEEL_SLOTS_ALL,
                                    LD_WHEEL_SLOTS_ALL + 1,
                                    20000,
                                    40000};

    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        size_t owned;

        ld_wheel_init(&wheel, 1);
        last_tick = 1;
        if (ld_wheel_reserve(&wheel, counts[c]) != 0) {
            fprintf(stderr, "reserve of %zu refused\n", counts[c]);
            failures++;
        }
        owned = wheel.owned;
        for (size_t i = 0; i < counts[c]; i++)
            ld_wheel_add(&wheel, &items[i % N], 2 + (uint64_t)i * 257);
        ld_wheel_advance(&wheel, UINT64_MAX / 2, fire_each, &(each){on_fire, NULL});
        if (wheel.owned != owned || wheel.count != 0) {
            fprintf(stderr, "%zu adds after their reserve grew %zu blocks to %zu\n",
                    counts[c], owned, wheel.owned);
            failures++;
        }
        ld_wheel_fini(&wheel);
    }
}

/* Level 0's next busy slot is found through its summary of non-empty words: a few
 * items in words far apart, at the ends of words and of level 0 and just past it, fire
 * exactly when due as the clock jumps from event to event, and no jump passes a
 * deadline, whether the clock starts at the start of a level-0 window or late in one
 * (so that deadlines wrap into the next window, a level up). */
static void sparse_level0(void)
{
    static const uint64_t after[] = {1,    2,    63,   64,   65,   127,  700,
                                     2047, 4030, 4095, 4096, 4097, 9000, 70000};
    static const uint64_t starts[] = {5 * LD_WHEEL_SLOTS0, 5 * LD_WHEEL_SLOTS0 + 4000};
    const long n = (long)(sizeof after / sizeof after[0]);

    for (size_t k = 0; k < 2; k++) {
        ld_wheel_init(&wheel, starts[k]);
        last_tick = starts[k];
        fired_count = 0;
        for (long i = 0; i < n; i++) {
            items[i] = (item){.due = starts[k] + after[i]};
            ld_wheel_add(&wheel, &items[i], items[i].due);
        }
        while (wheel.count != 0) {
            uint64_t next = ld_wheel_next(&wheel);
            for (long i = 0; i < n; i++)
                if (!items[i].fired && items[i].due < next) {
                    fprintf(stderr, "next %llu passes a deadline at %llu\n",
                            (unsigned long long)next, (unsigned long long)items[i].due);
                    failures++;
                    ld_wheel_fini(&wheel);
                    return;
                }
            ld_wheel_advance(&wheel, next, fire_each, &(each){on_fire, NULL});
        }
        for (long i = 0; i < n; i++)
            if (items[i].fired != 1 || items[i].fired_at != items[i].due) {
                fprintf(stderr, "sparse item due %llu fired %d times at %llu\n",
                        (unsigned long long)items[i].due, items[i].fired,
                        (unsigned long long)items[i].fired_at);
                failures++;
            }
        ld_wheel_fini(&wheel);
    }
}

/* Fini of a wheel still holding items drops them, frees every block, and leaves an
 * empty wheel. */
static void dropped(void)
{
    ld_wheel_init(&wheel, 5);
    for (long i = 0; i < N; i++)
        ld_wheel_add(&wheel, &items[i], 6 + (uint64_t)i * 1001);
    ld_wheel_fini(&wheel);
    if (wheel.count != 0 || ld_wheel_next(&wheel) != UINT64_MAX) {
        fprintf(stderr, "a finished wheel still has work\n");
        failures++;
    }
}

int main(void)
{
    ordering();
    round_trip(123456789, 0, 1);
    round_trip(0xFFFFFF00u, 1, 2);
    round_trip((1ull << 48) - 17, 2, 3);
    readd(987654321, 0, 4);
    readd((1ull << 32) - 40000, 1, 5);
    opaque();
    sparse_level0();
    dropped();
    reserved();
    if (failures) {
        fprintf(stderr, "test_gt_wheel: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_wheel: ok\n");
    return 0;
}
