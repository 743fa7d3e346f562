/* gt_stack.h: green-thread stacks (internal to runtime/; the depot's contract is in
 * gt.h).
 *
 * Stacks are carved from slabs, large mmap'd regions, so a million stacks cost a few
 * hundred mappings rather than a million. Each stack is a slot of the slab:
 *
 *   [ overflow page | usable stack, growing down from its top | header ]
 *
 * The header (LD_STACK_HEADER bytes) holds, in use, the green thread's own struct and,
 * after it (LD_STACK_AT), the ld_stack below, so a thread's struct and its first frames
 * share one page and a spawn allocates nothing. The overflow page catches an overflow in
 * one of three ways, chosen per stack:
 *
 *   advice  a MADV_GUARD_INSTALL guard region (Linux 6.13 and later): costs no VMA, so
 *           neighbouring slots stay one mapping.
 *   page    a PROT_NONE page: two VMAs per stack, so these are handed out only within a
 *           process-wide budget of a quarter of vm.max_map_count.
 *   canary  plain memory the runtime never writes: the scheduler checks at every switch
 *           away from the thread that the 512 bytes right below the stack still read
 *           zero, and the whole page when the thread ends; a fault with the stack
 *           pointer below the stack is an overflow too. Reading never-written memory
 *           maps the shared zero page, so this costs no VMA and no resident memory.
 *
 * The environment variable LOOMDIST_STACK_GUARD=page or =canary skips the better modes,
 * so the fallbacks of older kernels can be tried on any.
 *
 * In copy mode (gt.h) a slot is a chunk instead, [ thread's struct | frozen frames ],
 * with no ld_stack of its own, and each scheduler maps a run stack of its own,
 * [ PROT_NONE page | stack ], that its threads share, described by an ld_stack with
 * guard LD_GUARD_SHARED: the stack a thread faults on when it overflows.
 *
 * Either way the depot and the caches hand out slots by the start of their header,
 * an ld_slot: where the thread's struct goes.
 *
 * What happens once a guard is hit is gt_overflow.h's.
 */
#ifndef LD_GT_STACK_H
#define LD_GT_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "gt.h"
#include "gt_switch.h" /* LD_CTX_ASAN */

#if defined(__has_include)
/* cppcheck cannot evaluate __has_include. */
// cppcheck-suppress preprocessorErrorDirective
#if __has_include(<valgrind/valgrind.h>)
#define LD_STACK_VALGRIND 1
#endif
#endif

/* Bytes at the top of each slot for the ld_stack and the green thread's struct. */
#define LD_STACK_HEADER LD_GT_STACK_HEADER

/* Bytes below a canary stack checked at every switch; the whole page is checked when
 * the thread ends. */
#define LD_STACK_CANARY 512u

enum ld_stack_guard { LD_GUARD_ADVICE, LD_GUARD_PAGE, LD_GUARD_CANARY, LD_GUARD_SHARED };

/* The start of a slot's header, where its thread's struct lives: never read as
 * anything else, so it stays an incomplete type. */
typedef struct ld_slot ld_slot;

/* What an own stack is, kept in its header after the thread's struct. */
typedef struct ld_stack {
    void *lo;            /* lowest usable byte; the overflow page lies just below */
    uint32_t size;       /* usable bytes, a multiple of the page size: at most
                            LD_STACK_SIZE_MAX */
    uint32_t touched;    /* own mode: the deepest a thread's frames have reached below the
                            header, as seen at its switch-outs, since the stack was carved
                            or last trimmed: kept when the stack is reused */
    unsigned char guard; /* enum ld_stack_guard */
    unsigned char fresh; /* own mode: carved and not yet given to a thread */
#ifdef LD_STACK_VALGRIND
    unsigned vg_id; /* valgrind's name for the registered stack */
#endif
} ld_stack;

/* The largest stack a depot makes, or a run stack maps: 1 GiB. */
#define LD_STACK_SIZE_MAX (1u << 30)

/* One scheduler's stacks: free ones of its own in front of a depot that may be
 * shared, so most spawns and ends take no lock. Both keep arrays of pointers, never
 * lists through the stacks, so taking one reads no cold stack to find the next. */
typedef struct ld_stack_cache {
    ld_stack_depot *depot;
    int own_depot;  /* the depot was made for this cache, and dies with it */
    ld_slot **ring; /* stacks ready for reuse, a ring of mask + 1 from the oldest at
                       `first` to the most recently put, taken first */
    size_t mask;
    size_t first;
    size_t count;      /* in the ring */
    size_t cap;        /* a put to a cache of this many gives its oldest to the depot */
    int prefetch_from; /* where, from a stack's header, a new thread's writes start */
} ld_stack_cache;

/* A cache over depot, or over a private depot of `size` usable bytes in `mode` when
 * depot is NULL. */
int ld_stack_cache_init(ld_stack_cache *c, ld_stack_depot *depot, size_t size,
                        enum ld_stack_mode mode, size_t cap);

/* The depot's mode, and the bytes of the stacks it hands out or, in copy mode, of the
 * run stack each scheduler maps. */
enum ld_stack_mode ld_stack_depot_mode(const ld_stack_depot *p);
size_t ld_stack_depot_size(const ld_stack_depot *p);

/* Copy mode: a chunk's header is the thread's struct, one cache line, and right after
 * it, in the lines a resume fetches anyway, the room for its frozen frames: two lines,
 * as deep as a thread parked in a sleep called from its function (a settle trade's
 * wait_trade: 128 bytes on x86-64, the switch's 64 among them). A parked thread is
 * then three lines, 192 bytes. A sanitizer's fiber fields, or the ucontext backend's
 * environment, make the context longer and the struct two lines; a sanitizer's deeper
 * frames spill past the smaller room either way (the ucontext backend has no copy
 * mode). */
#if defined(LD_CTX_ASAN) || defined(LD_CTX_TSAN) || defined(LD_CTX_UCONTEXT)
#define LD_STACK_CHUNK_HEADER 128u
#else
#define LD_STACK_CHUNK_HEADER 64u
#endif
#define LD_STACK_CHUNK_ROOM (LD_GT_STACK_CHUNK - LD_STACK_CHUNK_HEADER)

static inline void *ld_stack_chunk_room(ld_slot *chunk)
{
    return (char *)chunk + LD_STACK_CHUNK_HEADER;
}

/* Own mode: a stack's ld_stack lies right after its thread's struct, which is as long
 * as a chunk's, so the two share the header's first lines; the stack's top is the
 * header's start. */
#define LD_STACK_AT LD_STACK_CHUNK_HEADER
_Static_assert(LD_STACK_AT + sizeof(ld_stack) <= LD_STACK_HEADER,
               "an own stack's header holds the thread's struct and its ld_stack");

static inline ld_stack *ld_slot_stack(ld_slot *h)
{
    return (ld_stack *)((char *)h + LD_STACK_AT);
}

static inline char *ld_stack_top(const ld_stack *st)
{
    return (char *)st - LD_STACK_AT;
}

/* The page size, as the stacks use it. */
size_t ld_stack_page(void);

/* A new mapping for stacks or chunks: under ASan, clear what the shadow still says of
 * memory mapped there before. */
void ld_stack_unpoison_fresh(void *base, size_t len);

/* Give every free stack back to the depot, and destroy the depot if it was private. */
void ld_stack_cache_fini(ld_stack_cache *c);

/* How many stacks ahead of a spawn the cache starts fetching one (ld_stack_get). */
#define LD_STACK_PREFETCH 12u

/* Start fetching the lines a new thread soon writes in slot h: its struct at the start
 * of the header, and its first frames, which an own stack has just below the header
 * (from its first run: six lines in all, its ld_stack among them) and a chunk in its
 * room, right after it (from its first freeze: the chunk's three). Stacks in the cache
 * are mostly cold, and the array, unlike a list linked through them, names the next ones
 * before any of them is read. Always inlined: GCC deems a function that only prefetches
 * free of effects, and drops every call to it. */
_Static_assert(LD_GT_STACK_CHUNK == 3 * 64, "ld_stack_prefetch fetches a chunk's lines");

static inline __attribute__((always_inline)) void
ld_stack_prefetch(const ld_stack_cache *c, const ld_slot *h)
{
    const char *p = (const char *)h + c->prefetch_from;

    __builtin_prefetch(p, 1);
    __builtin_prefetch(p + 64, 1);
    __builtin_prefetch(p + 128, 1);
    if (c->prefetch_from != 0) {
        __builtin_prefetch(p + 192, 1);
        __builtin_prefetch(p + 256, 1);
        __builtin_prefetch(p + 320, 1);
    }
}

/* The rest of ld_stack_get and ld_stack_put, out of line. */
ld_slot *ld_stack_get_slow(ld_stack_cache *c);
void ld_stack_put_slow(ld_stack_cache *c, ld_slot *h);

/* A stack: from the cache, else from the depot, else newly carved. NULL: out of memory
 * (the slab mmap was refused). The newest stack of the cache; the one
 * LD_STACK_PREFETCH places behind it starts coming in now, for a spawn soon after.
 * Inlined, since a spawn that takes a cached stack costs little more than the call. */
static inline ld_slot *ld_stack_get(ld_stack_cache *c)
{
    if (c->count <= LD_STACK_PREFETCH)
        return ld_stack_get_slow(c);
    c->count--;
    ld_stack_prefetch(c, c->ring[(c->first + c->count - LD_STACK_PREFETCH) & c->mask]);
    return c->ring[(c->first + c->count) & c->mask];
}

/* Give a stack back, once nothing runs on it or reads its header any more. Inlined
 * while the cache has room, but under ASan (see ld_stack_put_slow). */
static inline void ld_stack_put(ld_stack_cache *c, ld_slot *h)
{
#ifndef LD_CTX_ASAN
    if (c->count < c->cap) {
        c->ring[(c->first + c->count) & c->mask] = h;
        c->count++;
        return;
    }
#endif
    ld_stack_put_slow(c, h);
}

/* Own mode: the bytes of st's slot its threads have touched, the header's page and
 * those below it down to `touched`, in whole pages of `page` bytes: a slot ends on a
 * page boundary. */
static inline uint64_t ld_stack_touched_bytes(const ld_stack *st, size_t page)
{
    return ((uint64_t)LD_STACK_HEADER + st->touched + page - 1) & ~(uint64_t)(page - 1);
}

/* Own mode, for a switched-out thread whose stack pointer is sp: give back the touched
 * pages below the page under sp (madvise MADV_DONTNEED; they read zero when touched
 * again), so that `touched` ends at the bottom of that page. The guard below the stack
 * and the header above it are never touched. Call it off st, from another stack.
 * Returns the bytes given back: 0 when nothing lay below that page, or the kernel
 * refused. */
uint64_t ld_stack_trim(ld_stack *st, const void *sp);

/* Whether a fault at addr, taken with the stack pointer at sp, shows an overflow of
 * st: in its guard page, below the stack, or with its canary written. Async-signal-safe.
 */
int ld_stack_overflowed(const ld_stack *st, const void *addr, const void *sp);

/* Whether the `bytes` right below a stack all read zero. Not instrumented: after an
 * overflow ASan has the frames that landed there poisoned, and reading them is the
 * point. */
__attribute__((no_sanitize_address)) static inline int
ld_stack_zero_below(const ld_stack *st, size_t bytes)
{
    const uint64_t *w = (const uint64_t *)((const char *)st->lo - bytes);
    uint64_t any = 0;
    size_t i;

    for (i = 0; i < bytes / sizeof *w; i++)
        any |= w[i];
    return any == 0;
}

/* For a canary stack, whether the bytes checked at a switch are intact; 1 for the
 * others. */
static inline int ld_stack_intact(const ld_stack *st)
{
    return st->guard != LD_GUARD_CANARY || ld_stack_zero_below(st, LD_STACK_CANARY);
}

/* The same for a stack whose thread has ended: its whole canary page. */
int ld_stack_canary_page_intact(const ld_stack *st);

static inline int ld_stack_intact_at_end(const ld_stack *st)
{
    return st->guard != LD_GUARD_CANARY || ld_stack_canary_page_intact(st);
}

#endif
