/* gt_copy.h: copy mode's run stacks, and freezing and thawing the frames of the green
 * threads that share one (internal to runtime/; the mode itself is described in gt.h).
 *
 * Each scheduler in copy mode maps one run stack, [ PROT_NONE page | stack ], that all
 * its threads run on. When another thread needs it, the frames the last one left there
 * are frozen: copied out into that thread's chunk (gt_stack.h), and into a heap spill
 * for what does not fit. Before the thread runs again they are thawed: copied back to
 * the very addresses they left, so a pointer into a thread's own frames stays good
 * while that thread runs.
 *
 * Nothing here knows a green thread: the scheduler says whose frames go where.
 */
#ifndef LD_GT_COPY_H
#define LD_GT_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "gt_stack.h"

/* A scheduler's run stack of `size` usable bytes (rounded up to pages) above a
 * PROT_NONE page, described in *run with guard LD_GUARD_SHARED; a negative errno from
 * mmap or mprotect. */
int ld_copy_run_map(ld_stack *run, size_t size);
void ld_copy_run_unmap(ld_stack *run);

/* Frames are copied in whole cache lines, from the one the stack pointer lies in. */
#define LD_COPY_LINE 64u

/* The frames a switched-out thread left on the run stack: the len bytes below the
 * stack's top. What fits stays in the chunk's room; a deeper stack keeps the rest in a
 * heap spill, sized at each switch-out, that lives until trimmed or released. */
typedef struct ld_copy_frozen {
    void *spill;
    uint32_t len;       /* bytes frozen, a multiple of LD_COPY_LINE */
    uint32_t spill_cap; /* bytes of spill */
} ld_copy_frozen;

/* The bytes a freeze copies out for a thread switched out at sp: from sp's line to
 * top, which is line-aligned. */
static inline uint32_t ld_copy_len(const void *sp, const void *top)
{
    uintptr_t lo = (uintptr_t)sp & ~(uintptr_t)(LD_COPY_LINE - 1);
    return (uint32_t)((uintptr_t)top - lo);
}

/* What making room for a freeze took. */
enum ld_copy_room { LD_COPY_FITS, LD_COPY_ALLOC, LD_COPY_GREW };

/* The bytes of a freeze of len that spill past a chunk's room. */
static inline uint32_t ld_copy_spill_need(uint32_t len)
{
    return len > LD_STACK_CHUNK_ROOM ? len - LD_STACK_CHUNK_ROOM : 0;
}

/* The rest of ld_copy_reserve, for a spill too small for what a freeze puts past the
 * room. */
int ld_copy_reserve_grow(ld_copy_frozen *f, uint32_t len);

/* At a thread's switch-out, while its frames are on the run stack and its spill holds
 * nothing live: make the spill hold what a freeze of len bytes puts past the room.
 * An enum ld_copy_room, or -ENOMEM (the spill is then gone, and the thread must not be
 * frozen). A spill that fits, the common case, costs a comparison. */
static inline int ld_copy_reserve(ld_copy_frozen *f, uint32_t len)
{
    return ld_copy_spill_need(len) <= f->spill_cap ? LD_COPY_FITS
                                                   : ld_copy_reserve_grow(f, len);
}

/* At a switch-out too: shrink the spill to what a freeze of len bytes needs, freeing
 * it if the room holds them all. Returns the bytes given back. */
uint32_t ld_copy_trim(ld_copy_frozen *f, uint32_t len);

/* Whole cache lines, one or two (a parked thread has at least its switch's frame, and
 * the chunk's room holds two), each a fixed-size copy the compiler turns into vector
 * moves: a string move's start-up would cost more than the few lines a parked thread
 * has. A line is moved as two 32-byte vectors, both ends being line-aligned (the run
 * stack's top and a chunk's room): one move each where the scheduler's batch is
 * compiled for AVX2 (gt_sched.c), two 16-byte ones otherwise. */
_Static_assert(LD_STACK_CHUNK_ROOM <= 2 * LD_COPY_LINE, "ld_copy_lines copies 2 lines");

typedef long long ld_copy_half __attribute__((vector_size(32), aligned(32), may_alias));

#define LD_COPY_LINE_AT(dst, src, i)                                                     \
    do {                                                                                 \
        const ld_copy_half *from_ = (const ld_copy_half *)(src) + 2 * (i);               \
        ld_copy_half *to_ = (ld_copy_half *)(dst) + 2 * (i);                             \
        ld_copy_half lo_ = from_[0], hi_ = from_[1];                                     \
        to_[0] = lo_;                                                                    \
        to_[1] = hi_;                                                                    \
    } while (0)

static inline void ld_copy_lines(char *dst, const char *src, size_t bytes)
{
    if (bytes == 2 * LD_COPY_LINE)
        LD_COPY_LINE_AT(dst, src, 1);
    LD_COPY_LINE_AT(dst, src, 0);
}

/* The most bytes a freeze or thaw copies plainly, inlined into the scheduler: once a
 * run stack is mapped in a process where no tool needs telling which bytes a copy
 * touches (no ASan, no memcheck), the chunk's room; else 0. Everything else goes the
 * told way, out of line. One comparison tells both apart, since a copy is never
 * empty. */
extern uint32_t ld_copy_plain_max;

void ld_copy_freeze_told(ld_slot *chunk, ld_copy_frozen *f, const void *sp,
                         const void *top);
void ld_copy_thaw_told(ld_slot *chunk, const ld_copy_frozen *f, void *top);

/* Copy the run stack out from sp's line to top into chunk and f, whose spill
 * ld_copy_reserve made large enough at the thread's switch-out. The copy starts at the
 * line sp lies in, so it is whole lines on both sides; the run stack's top and the
 * room are line-aligned. */
static inline void ld_copy_freeze(ld_slot *chunk, ld_copy_frozen *f, const void *sp,
                                  const void *top)
{
    uint32_t len = ld_copy_len(sp, top);

    if (len > ld_copy_plain_max) {
        ld_copy_freeze_told(chunk, f, sp, top);
        return;
    }
    ld_copy_lines(ld_stack_chunk_room(chunk), (const char *)top - len, len);
    f->len = len;
}

/* Copy the frozen frames back to where they were, the f->len bytes below top. */
static inline void ld_copy_thaw(ld_slot *chunk, const ld_copy_frozen *f, void *top)
{
    if (f->len > ld_copy_plain_max) {
        ld_copy_thaw_told(chunk, f, top);
        return;
    }
    ld_copy_lines((char *)top - f->len, ld_stack_chunk_room(chunk), f->len);
}

/* Free the spill; f then holds nothing. */
void ld_copy_release(ld_copy_frozen *f);

#endif
