/* gt_wheel.h: a hierarchical timing wheel with nanosecond deadlines (internal to src/).
 *
 * Time is counted in ticks of 2^LD_WHEEL_TICK_SHIFT ns (about 16 µs). A deadline is
 * rounded up to a whole tick, so an entry never fires early and at most one tick late
 * (plus however late the wheel is advanced). Adding and firing an entry cost O(1)
 * whatever the number of entries: a million sleepers cost no more per sleep than one.
 *
 * Eight levels of 256 slots cover every 64-bit tick. An entry sits at the level of the
 * highest byte in which its deadline differs from the wheel's clock, in the slot of
 * that byte; when the clock reaches the start of that slot the entry moves down a
 * level (a cascade), and at level 0 it fires. Slots are FIFO, so entries due in the
 * same tick fire in the order they were added.
 *
 * The wheel does no I/O and knows no clock: its owner passes the time in.
 */
#ifndef LD_GT_WHEEL_H
#define LD_GT_WHEEL_H

#include <stddef.h>
#include <stdint.h>

#define LD_WHEEL_TICK_SHIFT 14
#define LD_WHEEL_LEVELS 8
#define LD_WHEEL_SLOTS 256

/* Lives in whatever waits (a green thread); the wheel only links it. */
typedef struct ld_wheel_entry {
    struct ld_wheel_entry *next;
    uint64_t due; /* tick */
} ld_wheel_entry;

typedef struct ld_wheel {
    uint64_t now; /* every entry due at or before this tick has fired */
    size_t count; /* entries waiting */
    size_t level_count[LD_WHEEL_LEVELS];
    uint64_t busy[LD_WHEEL_LEVELS][LD_WHEEL_SLOTS / 64]; /* non-empty slots */
    ld_wheel_entry *head[LD_WHEEL_LEVELS][LD_WHEEL_SLOTS];
    ld_wheel_entry *tail[LD_WHEEL_LEVELS][LD_WHEEL_SLOTS];
} ld_wheel;

typedef void (*ld_wheel_fire)(ld_wheel_entry *e, void *ctx);

/* An empty wheel whose clock reads `now` ticks. */
void ld_wheel_init(ld_wheel *w, uint64_t now);

/* The tick a deadline of t ns falls in, rounded up, and the tick t ns lies in. */
static inline uint64_t ld_wheel_tick_ceil(uint64_t t)
{
    return (t >> LD_WHEEL_TICK_SHIFT) + ((t & ((1u << LD_WHEEL_TICK_SHIFT) - 1)) != 0);
}

static inline uint64_t ld_wheel_tick_floor(uint64_t t)
{
    return t >> LD_WHEEL_TICK_SHIFT;
}

/* Add e, due at tick `due`. Returns 0, or 1 without adding it when that tick has
 * already passed: the caller treats e as fired. */
int ld_wheel_add(ld_wheel *w, ld_wheel_entry *e, uint64_t due);

/* The earliest tick at which the wheel has work (a firing or a cascade), never later
 * than the earliest deadline; UINT64_MAX when it is empty. */
uint64_t ld_wheel_next(const ld_wheel *w);

/* Move the clock to `now`, firing every entry due by then in deadline order. fire may
 * add entries; those due by `now` fire in the same call. */
void ld_wheel_advance(ld_wheel *w, uint64_t now, ld_wheel_fire fire, void *ctx);

#endif
