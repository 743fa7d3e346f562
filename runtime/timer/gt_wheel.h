/* gt_wheel.h: a hierarchical timing wheel with nanosecond deadlines (internal to
 * runtime/).
 *
 * Time is counted in ticks of 2^LD_WHEEL_TICK_SHIFT ns (about 16 µs). A deadline is
 * rounded up to a whole tick, so an item never fires early and at most one tick late
 * (plus however late the wheel is advanced). Adding and firing an item cost O(1)
 * whatever the number of items: a million sleepers cost no more per sleep than one.
 *
 * Level 0 has 4,096 slots, one a tick (67 ms in all); seven levels of 256 slots above
 * it cover every other bit of a 64-bit tick. An item sits at the level of the highest
 * digit (the low 12 bits, then each byte above them) in which its deadline differs
 * from the wheel's clock, in the slot of that digit; when the clock reaches the start
 * of that slot the item moves down a level (a cascade), and at level 0 it fires. Most
 * sleeps, a few ms to tens of ms, thus land in level 0 at once and never cascade.
 * Slots are FIFO, so items due in the same tick fire in the order they were added.
 *
 * The wheel owns its entries: a slot is a list of blocks of LD_WHEEL_BLOCK_ITEMS
 * (item, due) pairs, taken from batches the wheel allocates. An item is an opaque
 * pointer the wheel never dereferences; it is handed back to the fire callback, so a
 * cascade reads only the wheel's own contiguous blocks, never the items' memory.
 *
 * Only ld_wheel_add and ld_wheel_reserve allocate: they keep the wheel owning enough
 * blocks for every cascade and firing to come, and return -ENOMEM, adding nothing,
 * when they cannot. ld_wheel_advance never allocates, so it never fails. Blocks are
 * kept until ld_wheel_fini, so a reservation holds until then.
 *
 * The wheel does no I/O and knows no clock: its owner passes the time in.
 */
#ifndef LD_GT_WHEEL_H
#define LD_GT_WHEEL_H

#include <stddef.h>
#include <stdint.h>

#define LD_WHEEL_TICK_SHIFT 14
#define LD_WHEEL_LEVELS 8
#define LD_WHEEL_BITS0 12 /* level 0's digit */
#define LD_WHEEL_SLOTS0 (1u << LD_WHEEL_BITS0)
#define LD_WHEEL_SLOTS 256 /* each level's above it */
#define LD_WHEEL_SLOTS_ALL (LD_WHEEL_SLOTS0 + (LD_WHEEL_LEVELS - 1) * LD_WHEEL_SLOTS)
#define LD_WHEEL_BLOCK_ITEMS 15 /* pairs a block holds: 256 bytes with its header */

typedef struct ld_wheel_block ld_wheel_block;

typedef struct ld_wheel {
    uint64_t now;            /* every item due at or before this tick has fired */
    size_t count;            /* items waiting */
    size_t owned;            /* blocks in slots or free, batch headers aside */
    size_t fits;             /* counts below this need no more blocks than owned */
    int halted;              /* ld_wheel_halt was called: nothing fires any more */
    ld_wheel_block *free;    /* spare blocks, last freed first */
    ld_wheel_block *batches; /* the header block of every batch, for fini */
    uint64_t words0;         /* level 0's non-zero words of busy */
    /* Every level's slots in one row, level 0's first, then 256 for each level above. */
    uint64_t busy[LD_WHEEL_SLOTS_ALL / 64]; /* non-empty slots */
    ld_wheel_block *head[LD_WHEEL_SLOTS_ALL];
    ld_wheel_block *tail[LD_WHEEL_SLOTS_ALL];
} ld_wheel;

/* n >= 1 items due in one tick, in the order they were added. */
typedef void (*ld_wheel_fire)(void *const *items, size_t n, void *ctx);

/* An empty wheel whose clock reads `now` ticks; it allocates nothing. */
void ld_wheel_init(ld_wheel *w, uint64_t now);

/* Free every block, leaving the wheel empty as ld_wheel_init does; items still in it
 * are dropped, never fired. */
void ld_wheel_fini(ld_wheel *w);

/* The tick a deadline of t ns falls in, rounded up, and the tick t ns lies in. */
static inline uint64_t ld_wheel_tick_ceil(uint64_t t)
{
    return (t >> LD_WHEEL_TICK_SHIFT) + ((t & ((1u << LD_WHEEL_TICK_SHIFT) - 1)) != 0);
}

static inline uint64_t ld_wheel_tick_floor(uint64_t t)
{
    return t >> LD_WHEEL_TICK_SHIFT;
}

/* The rest of ld_wheel_reserve, for a count the blocks owned do not cover yet. */
int ld_wheel_reserve_grow(ld_wheel *w, size_t count);

/* Own blocks enough for `count` items, so that adds up to that count cannot fail:
 * 0, or -ENOMEM when the wheel could not grow. A count the wheel already covers
 * (ld_wheel_covers) costs one comparison, so a caller may reserve at every add. */
static inline int ld_wheel_covers(const ld_wheel *w, size_t count)
{
    return count < w->fits;
}

/* How many items a wheel holding `count` can take beyond them, each add covered. */
static inline size_t ld_wheel_room(const ld_wheel *w, size_t count)
{
    return count < w->fits ? w->fits - 1 - count : 0;
}

static inline int ld_wheel_reserve(ld_wheel *w, size_t count)
{
    return ld_wheel_covers(w, count) ? 0 : ld_wheel_reserve_grow(w, count);
}

/* Add item, due at tick `due`. Returns 0; 1 without adding it when that tick has
 * already passed (the caller treats item as fired); -ENOMEM without adding it when
 * the wheel could not grow. */
int ld_wheel_add(ld_wheel *w, void *item, uint64_t due);

/* A span of ns from a reading of the clock yet to be taken, for ld_wheel_add_spans. */
typedef struct ld_wheel_span {
    void *item;
    uint64_t ns;
} ld_wheel_span;

/* Add n items, each due ns after now_ns (nanoseconds on the owner's clock, no older
 * than the wheel's clock) rounded up to a tick, and after the wheel's clock in any
 * case. ld_wheel_reserve must already cover the wheel's count plus n: this never
 * allocates, and never fails. */
void ld_wheel_add_spans(ld_wheel *w, const ld_wheel_span *spans, size_t n,
                        uint64_t now_ns);

/* The earliest tick at which the wheel has work (a firing or a cascade), never later
 * than the earliest deadline; UINT64_MAX when it is empty. */
uint64_t ld_wheel_next(const ld_wheel *w);

/* Fire nothing more, from the block being fired on, if any (fire may call it), until
 * ld_wheel_fini: for an owner that is closing. */
void ld_wheel_halt(ld_wheel *w);

/* Move the clock to `now`, firing every item due by then in deadline order, the items
 * due in one tick a block at a time. fire may add items; those due by `now` fire in
 * the same call. Advance itself never allocates (adds made by fire may). */
void ld_wheel_advance(ld_wheel *w, uint64_t now, ld_wheel_fire fire, void *ctx);

#endif
