/* test_gt_wheel.c: the timing wheel fires every entry exactly at its tick, in deadline
 * order and FIFO within a tick, whatever the spread of deadlines (near, across level
 * boundaries, decades away) and however the clock is advanced (tick by tick, in jumps
 * to the next event, or past many events at once). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_wheel.h"

#define N 50000

typedef struct item {
    ld_wheel_entry e; /* first, so the entry's address is the item's */
    uint64_t fired_at;
    long order;
    int fired;
} item;

static ld_wheel wheel;
static item items[N];
static long fired_count;
static int failures;

static void on_fire(ld_wheel_entry *e, void *ctx)
{
    item *it = (item *)e;
    (void)ctx;
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
    ld_wheel_init(&wheel, start);
    fired_count = 0;
    for (long i = 0; i < N; i++) {
        uint64_t d = start + 1 + rnd(&s) % 70000;
        if (i % 7 == 0)
            d = start + 1 + rnd(&s) % (1ull << 40);
        if (i % 1000 == 0)
            d = start + 1 + (rnd(&s) << 20);
        items[i] = (item){0};
        if (ld_wheel_add(&wheel, &items[i].e, d) != 0) {
            fprintf(stderr, "add of a future deadline refused\n");
            failures++;
        }
    }
    while (wheel.count != 0) {
        uint64_t next = ld_wheel_next(&wheel);
        if (next < now) {
            fprintf(stderr, "next %llu is before the clock %llu\n",
                    (unsigned long long)next, (unsigned long long)now);
            failures++;
            break;
        }
        now = mode == 0 ? next : mode == 1 ? now + 1 + rnd(&s) % 5000 : next + 3;
        ld_wheel_advance(&wheel, now, on_fire, NULL);
        if (mode == 1 && now - start > (1ull << 22))
            mode = 0; /* past the dense part, jump */
    }
    for (long i = 0; i < N; i++) {
        const item *it = &items[i];
        if (it->fired != 1 || it->fired_at < it->e.due ||
            (exact && it->fired_at > it->e.due + 3)) {
            fprintf(stderr, "item %ld due %llu fired %d times at %llu\n", i,
                    (unsigned long long)it->e.due, it->fired,
                    (unsigned long long)it->fired_at);
            failures++;
            return;
        }
    }
}

/* Entries due in one tick fire in the order they were added; an earlier deadline
 * always fires first; a deadline already passed is refused, to be treated as fired. */
static void ordering(void)
{
    ld_wheel_init(&wheel, 1000);
    fired_count = 0;
    for (long i = 0; i < 10; i++) {
        items[i] = (item){0};
        ld_wheel_add(&wheel, &items[i].e, i < 5 ? 1300 : 1200);
    }
    items[10] = (item){0};
    if (ld_wheel_add(&wheel, &items[10].e, 1000) != 1) {
        fprintf(stderr, "a deadline at the clock was accepted\n");
        failures++;
    }
    ld_wheel_advance(&wheel, 5000, on_fire, NULL);
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
}

int main(void)
{
    ordering();
    round_trip(123456789, 0, 1);
    round_trip(0xFFFFFF00u, 1, 2);
    round_trip((1ull << 48) - 17, 2, 3);
    if (failures) {
        fprintf(stderr, "test_gt_wheel: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gt_wheel: ok\n");
    return 0;
}
