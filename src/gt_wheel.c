/* gt_wheel.c: the hierarchical timing wheel behind ld_gt_sleep_ns. */
#include "gt_wheel.h"

#include <string.h>

#define WHEEL_BITS 8u
#define WHEEL_MASK (LD_WHEEL_SLOTS - 1u)

void ld_wheel_init(ld_wheel *w, uint64_t now)
{
    memset(w, 0, sizeof *w);
    w->now = now;
}

/* The level of the highest byte in which due and the clock differ (they do differ). */
static unsigned wheel_level(uint64_t due, uint64_t now)
{
    return (unsigned)(63 - __builtin_clzll(due ^ now)) / WHEEL_BITS;
}

static void slot_push(ld_wheel *w, unsigned level, unsigned slot, ld_wheel_entry *e)
{
    e->next = NULL;
    if (w->tail[level][slot] != NULL)
        w->tail[level][slot]->next = e;
    else
        w->head[level][slot] = e;
    w->tail[level][slot] = e;
    w->busy[level][slot / 64] |= 1ull << (slot % 64);
}

/* Empty a slot and return its list, oldest first. */
static ld_wheel_entry *slot_take(ld_wheel *w, unsigned level, unsigned slot)
{
    ld_wheel_entry *list = w->head[level][slot];

    w->head[level][slot] = NULL;
    w->tail[level][slot] = NULL;
    w->busy[level][slot / 64] &= ~(1ull << (slot % 64));
    return list;
}

/* An entry due now goes to the slot that fires next; any other to its level. */
static void wheel_place(ld_wheel *w, ld_wheel_entry *e)
{
    unsigned level;

    if (e->due == w->now) {
        slot_push(w, 0, (unsigned)(w->now & WHEEL_MASK), e);
        return;
    }
    level = wheel_level(e->due, w->now);
    slot_push(w, level, (unsigned)(e->due >> (level * WHEEL_BITS)) & WHEEL_MASK, e);
}

int ld_wheel_add(ld_wheel *w, ld_wheel_entry *e, uint64_t due)
{
    if (due <= w->now)
        return 1;
    e->due = due;
    wheel_place(w, e);
    w->count++;
    return 0;
}

/* The first non-empty slot after `after`, or -1: a scan of at most four words. */
static int next_busy(const uint64_t *busy, unsigned after)
{
    unsigned i = after + 1;

    while (i < LD_WHEEL_SLOTS) {
        uint64_t word = busy[i / 64] >> (i % 64);
        if (word != 0)
            return (int)(i + (unsigned)__builtin_ctzll(word));
        i = (i | 63u) + 1;
    }
    return -1;
}

/* Entries of a level are all due before the next boundary of the level above, so the
 * lowest non-empty level holds the answer: the start of its first non-empty slot. */
uint64_t ld_wheel_next(const ld_wheel *w)
{
    unsigned level;

    if (w->count == 0)
        return UINT64_MAX;
    for (level = 0; level < LD_WHEEL_LEVELS; level++) {
        unsigned shift = level * WHEEL_BITS;
        int slot = next_busy(w->busy[level], (unsigned)(w->now >> shift) & WHEEL_MASK);
        uint64_t base;

        if (slot < 0)
            continue;
        base = level + 1 == LD_WHEEL_LEVELS
                   ? 0
                   : w->now >> (shift + WHEEL_BITS) << (shift + WHEEL_BITS);
        return base | (uint64_t)slot << shift;
    }
    return UINT64_MAX;
}

/* At a boundary of level L (every lower byte of the clock 0), the slot the clock has
 * reached there moves down: its entries are placed again against the new clock. */
static void wheel_cascade(ld_wheel *w)
{
    unsigned level;

    for (level = LD_WHEEL_LEVELS - 1; level >= 1; level--) {
        unsigned shift = level * WHEEL_BITS;
        ld_wheel_entry *e, *next;

        if ((w->now & ((1ull << shift) - 1)) != 0)
            continue;
        for (e = slot_take(w, level, (unsigned)(w->now >> shift) & WHEEL_MASK); e != NULL;
             e = next) {
            next = e->next;
            if (next != NULL)
                __builtin_prefetch(next);
            wheel_place(w, e);
        }
    }
}

/* Jump from one tick with work to the next, never through empty ticks one by one. */
void ld_wheel_advance(ld_wheel *w, uint64_t now, ld_wheel_fire fire, void *ctx)
{
    while (w->count != 0) {
        uint64_t t = ld_wheel_next(w);
        ld_wheel_entry *e, *next;

        if (t > now)
            break;
        w->now = t;
        wheel_cascade(w);
        for (e = slot_take(w, 0, (unsigned)(t & WHEEL_MASK)); e != NULL; e = next) {
            next = e->next;
            if (next != NULL)
                __builtin_prefetch(next); /* entries live in pages of their own */
            w->count--;
            fire(e, ctx);
        }
    }
    if (now > w->now)
        w->now = now;
}
