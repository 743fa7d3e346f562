/* gt_wheel.c: the hierarchical timing wheel behind ld_gt_sleep_ns.
 *
 * Why advance never runs out of blocks. Every block of a slot but its tail is full, so
 * a slot of n pairs holds at most n/15 + 1 blocks (integer division), and all the slots
 * together at most count/15 + (non-empty slots) <= count/15 + min(count, S), S the
 * slots of all levels (LD_WHEEL_SLOTS_ALL). While a
 * list detached from a slot is walked, it adds the block being walked and the rest of
 * the list, whose blocks are full but for its last: (pairs left)/15 + 1 more. Taking a
 * block therefore never brings the blocks in use above count/15 + min(count, S) + 2,
 * the number blocks_needed returns and ld_wheel_add keeps the wheel owning, with the
 * pair just placed counted. Advance only ever lowers count, blocks_needed grows with
 * count, and blocks are never freed before fini, so the bound set up by the last add
 * holds until the next; adds made by fire callbacks set it up again for themselves.
 */
#include "gt_wheel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WHEEL_BITS 8u /* each level's digit above level 0 */
#define WHEEL_MASK (LD_WHEEL_SLOTS - 1u)
#define BATCH_BLOCKS 64 /* blocks per allocation, the first of them its header */

_Static_assert(LD_WHEEL_SLOTS0 == 64 * 64, "one bit of words0 per word of level 0");
_Static_assert(LD_WHEEL_BITS0 + WHEEL_BITS * (LD_WHEEL_LEVELS - 1) >= 64,
               "the levels cover every bit of a tick");

/* Where level L's digit starts in a tick: level 0's the low LD_WHEEL_BITS0 bits, each
 * level's above it the next byte. Level L + 1's shift is where L's digit ends. */
static inline unsigned level_shift(unsigned level)
{
    return level == 0 ? 0 : LD_WHEEL_BITS0 + WHEEL_BITS * (level - 1);
}

/* Where level L's slots start in the row of all slots. */
static inline unsigned level_base(unsigned level)
{
    return level == 0 ? 0 : LD_WHEEL_SLOTS0 + LD_WHEEL_SLOTS * (level - 1);
}

/* The slot, in the row, of tick t's digit at level L. */
static inline unsigned slot_at(unsigned level, uint64_t t)
{
    unsigned mask = level == 0 ? LD_WHEEL_SLOTS0 - 1 : WHEEL_MASK;

    return level_base(level) + ((unsigned)(t >> level_shift(level)) & mask);
}

/* t's digits below level L's: how far t lies past the start of its slot at level L,
 * 0 exactly at one of L's boundaries. */
static inline uint64_t below_digit(unsigned level, uint64_t t)
{
    return t & ((1ull << level_shift(level)) - 1);
}

/* Four cache lines, aligned to them, so a walk through a slot streams. A pair is an
 * item and its due tick, kept in two arrays, so that a fired block hands its items on
 * as they lie. */
struct ld_wheel_block {
    _Alignas(64) ld_wheel_block *next;
    unsigned n; /* pairs used, oldest first */
    void *items[LD_WHEEL_BLOCK_ITEMS];
    uint64_t dues[LD_WHEEL_BLOCK_ITEMS];
};

_Static_assert(sizeof(ld_wheel_block) <= 256, "a block is at most four cache lines");

void ld_wheel_init(ld_wheel *w, uint64_t now)
{
    memset(w, 0, sizeof *w);
    w->now = now;
}

/* Blocks are handed out singly but allocated by the batch, so only batches are freed. */
void ld_wheel_fini(ld_wheel *w)
{
    ld_wheel_block *batch = w->batches, *next;

    for (; batch != NULL; batch = next) {
        next = batch->next;
        free(batch);
    }
    ld_wheel_init(w, w->now);
}

/* One allocation for many blocks: its first block links the batches for fini, the
 * others go on the free list, lowest address on top so a slot's blocks run upwards. */
static int wheel_grow(ld_wheel *w)
{
    ld_wheel_block *batch =
        aligned_alloc(_Alignof(ld_wheel_block), BATCH_BLOCKS * sizeof *batch);
    int i;

    if (batch == NULL)
        return -ENOMEM;
    batch->next = w->batches;
    w->batches = batch;
    for (i = BATCH_BLOCKS - 1; i >= 1; i--) {
        batch[i].next = w->free;
        w->free = &batch[i];
    }
    w->owned += BATCH_BLOCKS - 1;
    return 0;
}

/* The blocks a wheel of `count` pairs must own for advance never to run out (see the
 * top of this file). */
static size_t blocks_needed(size_t count)
{
    return count / LD_WHEEL_BLOCK_ITEMS +
           (count < LD_WHEEL_SLOTS_ALL ? count : LD_WHEEL_SLOTS_ALL) + 2;
}

/* A spare block, emptied; the bound above guarantees there is one. */
static ld_wheel_block *block_take(ld_wheel *w)
{
    ld_wheel_block *b = w->free;

    w->free = b->next;
    b->next = NULL;
    b->n = 0;
    return b;
}

/* Last freed, first reused: the block most likely still in cache. */
static void block_give(ld_wheel *w, ld_wheel_block *b)
{
    b->next = w->free;
    w->free = b;
}

/* A slot's tail block has no room, or there is none: start one. Every block but the
 * tail stays full, which the bound on blocks relies on. */
static __attribute__((noinline)) ld_wheel_block *slot_extend(ld_wheel *w, unsigned at)
{
    ld_wheel_block *tail = w->tail[at], *b = block_take(w);

    if (tail == NULL) {
        w->head[at] = b;
        w->busy[at / 64] |= 1ull << (at % 64);
        if (at < LD_WHEEL_SLOTS0)
            w->words0 |= 1ull << (at / 64);
    } else {
        tail->next = b;
    }
    w->tail[at] = b;
    return b;
}

/* The tail block of the slot at `at`, with room for one more pair. */
static inline __attribute__((always_inline)) ld_wheel_block *slot_tail(ld_wheel *w,
                                                                       unsigned at)
{
    ld_wheel_block *b = w->tail[at];

    return b != NULL && b->n != LD_WHEEL_BLOCK_ITEMS ? b : slot_extend(w, at);
}

static inline void block_append(ld_wheel_block *b, void *item, uint64_t due)
{
    b->items[b->n] = item;
    b->dues[b->n] = due;
    b->n++;
}

/* Empty a slot and return its list of blocks, oldest first. */
static ld_wheel_block *slot_take(ld_wheel *w, unsigned at)
{
    ld_wheel_block *list = w->head[at];

    w->head[at] = NULL;
    w->tail[at] = NULL;
    w->busy[at / 64] &= ~(1ull << (at % 64));
    if (at < LD_WHEEL_SLOTS0 && w->busy[at / 64] == 0)
        w->words0 &= ~(1ull << (at / 64));
    return list;
}

/* A pair goes to the level of the highest digit in which due and the clock differ, in
 * that digit's slot: this returns that slot's tail, with room. The highest differing
 * bit b is in level 0's digit below LD_WHEEL_BITS0, and in level 1 + (b - BITS0) / 8
 * above it: raising b to at least BITS0 - 1 makes one division give both. One due now
 * has no differing bit: the |1 puts it at level 0, in the clock's own slot, the one
 * that fires next. */
static inline __attribute__((always_inline)) ld_wheel_block *wheel_tail(ld_wheel *w,
                                                                        uint64_t due)
{
    unsigned high = (unsigned)(63 - __builtin_clzll((due ^ w->now) | 1));
    unsigned level;

    high = high > LD_WHEEL_BITS0 - 1 ? high : LD_WHEEL_BITS0 - 1;
    level = (high - (LD_WHEEL_BITS0 - WHEEL_BITS)) / WHEEL_BITS;
    return slot_tail(w, slot_at(level, due));
}

/* Pairs placed one after another, as an add of many spans and a cascade place them:
 * one due in the same tick as the one before goes to the same tail block, while it has
 * room, without the slot worked out again, and the block's count is written once the
 * run ends (wheel_placer_flush). Sleepers fixed at one look mostly share their tick,
 * and keep sharing it as they cascade. */
typedef struct wheel_placer {
    ld_wheel_block *tail; /* NULL before the first pair */
    unsigned at; /* where tail's next pair goes: LD_WHEEL_BLOCK_ITEMS when it is full, or
                    before the first */
    uint64_t due;
} wheel_placer;

#define WHEEL_PLACER_INIT                                                                \
    {                                                                                    \
        NULL, LD_WHEEL_BLOCK_ITEMS, 0                                                    \
    }

static inline void wheel_placer_flush(wheel_placer *p)
{
    if (p->tail != NULL)
        p->tail->n = p->at;
}

static inline __attribute__((always_inline)) void
wheel_place_next(ld_wheel *w, wheel_placer *p, void *item, uint64_t due)
{
    if (due != p->due || p->at == LD_WHEEL_BLOCK_ITEMS) {
        wheel_placer_flush(p);
        p->tail = wheel_tail(w, due);
        p->at = p->tail->n;
        p->due = due;
    }
    p->tail->items[p->at] = item;
    p->tail->dues[p->at] = due;
    p->at++;
}

/* The least count whose blocks_needed exceeds `owned`, so that a reserve within it
 * is one comparison: with B pairs a block, qB + r pairs (r < B) below the slot count
 * need q(B + 1) + r + 2 blocks, and from the slot count on count/B + slots + 2. */
static size_t blocks_fit(size_t owned)
{
    const size_t b = LD_WHEEL_BLOCK_ITEMS;
    size_t k = owned - 2, r;

    if (owned < 2)
        return 0;
    if (owned >= blocks_needed(LD_WHEEL_SLOTS_ALL))
        return b * (owned - LD_WHEEL_SLOTS_ALL - 2) + b;
    r = k % (b + 1);
    return b * (k / (b + 1)) + (r < b - 1 ? r : b - 1) + 1;
}

/* A batch at a time, until the bound holds for `count`; a failure leaves the batches
 * already grown, which only add room. */
int ld_wheel_reserve_grow(ld_wheel *w, size_t count)
{
    int rc = 0;

    while (rc == 0 && w->owned < blocks_needed(count))
        rc = wheel_grow(w);
    w->fits = blocks_fit(w->owned);
    return rc;
}

/* Growing comes first, so a failure leaves the wheel's items as they were. One batch
 * is enough: blocks_needed rises by at most two per pair, and it held before this
 * add. */
int ld_wheel_add(ld_wheel *w, void *item, uint64_t due)
{
    if (due <= w->now)
        return 1;
    if (ld_wheel_reserve(w, w->count + 1) != 0)
        return -ENOMEM;
    block_append(wheel_tail(w, due), item, due);
    w->count++;
    return 0;
}

/* Each span becomes a deadline in the tick now_ns + ns ends in, rounded up, and
 * never sooner than the tick after the clock's, so that none is due already; a span
 * as long as the one before shares its tick, worked out once. */
void ld_wheel_add_spans(ld_wheel *w, const ld_wheel_span *spans, size_t n,
                        uint64_t now_ns)
{
    uint64_t floor = w->now + 1, ns = 0, due = floor;
    wheel_placer p = WHEEL_PLACER_INIT;
    size_t i;

    for (i = 0; i < n; i++) {
        if (i == 0 || spans[i].ns != ns) { /* sleepers mostly sleep alike */
            ns = spans[i].ns;
            due = ld_wheel_tick_ceil(now_ns + ns);
            due = due > floor ? due : floor;
        }
        wheel_place_next(w, &p, spans[i].item, due);
    }
    wheel_placer_flush(&p);
    w->count += n;
}

/* The first non-empty slot of a level above 0 after its slot `after`, or -1: a scan of
 * at most four words. Slots count from the level's first. */
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

/* The same for level 0, whose 64 words words0 summarizes: the rest of after's word,
 * then the first non-zero word beyond it. */
static int next_busy0(const ld_wheel *w, unsigned after)
{
    unsigned i = after + 1, word = i / 64;
    uint64_t bits, words;

    if (i == LD_WHEEL_SLOTS0)
        return -1;
    bits = w->busy[word] >> (i % 64);
    if (bits != 0)
        return (int)(i + (unsigned)__builtin_ctzll(bits));
    words = word == 63 ? 0 : w->words0 & (~0ull << (word + 1));
    if (words == 0)
        return -1;
    word = (unsigned)__builtin_ctzll(words);
    return (int)(word * 64 + (unsigned)__builtin_ctzll(w->busy[word]));
}

/* Pairs of a level are all due before the next boundary of the level above, so the
 * lowest non-empty level holds the answer: the start of its first non-empty slot. */
uint64_t ld_wheel_next(const ld_wheel *w)
{
    unsigned level;

    if (w->count == 0)
        return UINT64_MAX;
    for (level = 0; level < LD_WHEEL_LEVELS; level++) {
        unsigned base_at = level_base(level), at = slot_at(level, w->now) - base_at;
        int slot = level == 0 ? next_busy0(w, at) : next_busy(w->busy + base_at / 64, at);
        uint64_t base;

        if (slot < 0)
            continue;
        base = level + 1 == LD_WHEEL_LEVELS ? 0 : w->now - below_digit(level + 1, w->now);
        return base | (uint64_t)slot << level_shift(level);
    }
    return UINT64_MAX;
}

/* At a boundary of level L (every lower digit of the clock 0), the slot the clock has
 * reached there moves down: its pairs are placed again against the new clock, all in
 * levels below L, and each block goes back free once walked, for the next to reuse.
 * Only the wheel's own blocks are read. */
static void wheel_cascade(ld_wheel *w)
{
    unsigned level;

    for (level = LD_WHEEL_LEVELS - 1; level >= 1; level--) {
        wheel_placer p = WHEEL_PLACER_INIT;
        ld_wheel_block *b, *next;

        if (below_digit(level, w->now) != 0)
            continue;
        for (b = slot_take(w, slot_at(level, w->now)); b != NULL; b = next) {
            unsigned i;

            next = b->next;
            if (next != NULL)
                __builtin_prefetch(next);
            for (i = 0; i < b->n; i++)
                wheel_place_next(w, &p, b->items[i], b->dues[i]);
            block_give(w, b);
        }
        wheel_placer_flush(&p);
    }
}

/* Fire the level-0 slot of the clock's tick, a block of items at a time. Its list is
 * detached first, and what fire adds is due after the clock, so it lands in another
 * slot (a later one of level 0, or a higher level) and never in the list being walked,
 * which fire cannot reach. The wheel never reads an item, and leaves fetching them to
 * fire, which knows whether it reads them now (deadlines.c) or queues them to read
 * later (the scheduler fetches each a few places before it runs). */
static void wheel_fire(ld_wheel *w, ld_wheel_fire fire, void *ctx)
{
    ld_wheel_block *b, *next;

    for (b = slot_take(w, slot_at(0, w->now)); b != NULL; b = next) {
        next = b->next;
        if (next != NULL)
            __builtin_prefetch(next);
        if (!w->halted) {
            w->count -= b->n;
            fire(b->items, b->n, ctx);
        }
        block_give(w, b);
    }
}

/* The items left are dropped where they lie: fini frees their blocks with the
 * batches. */
void ld_wheel_halt(ld_wheel *w)
{
    w->halted = 1;
}

/* Jump from one tick with work to the next, never through empty ticks one by one. */
void ld_wheel_advance(ld_wheel *w, uint64_t now, ld_wheel_fire fire, void *ctx)
{
    while (w->count != 0 && !w->halted) {
        uint64_t t = ld_wheel_next(w);

        if (t > now)
            break;
        w->now = t;
        wheel_cascade(w);
        wheel_fire(w, fire, ctx);
    }
    if (now > w->now)
        w->now = now;
}
