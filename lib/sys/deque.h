/* deque.h: a fixed-capacity Chase-Lev work-stealing deque of 64-bit items.
 *
 * The owner pushes and takes at the bottom; any other thread steals from the top
 * (Chase and Lev 2005, with the C11 orderings of Le et al. 2013). Items are opaque
 * 64-bit values; LD_DEQUE_EMPTY is reserved.
 */
#ifndef LD_DEQUE_H
#define LD_DEQUE_H

#include <stdatomic.h>
#include <stdint.h>

#define LD_DEQUE_CAPACITY 128
#define LD_DEQUE_EMPTY UINT64_MAX

typedef struct ld_deque {
    _Alignas(64) atomic_llong top;
    _Alignas(64) atomic_llong bottom;
    atomic_uint_least64_t item[LD_DEQUE_CAPACITY];
} ld_deque;

void ld_deque_init(ld_deque *d);

/* Owner only. Returns -ENOSPC when full; the caller then keeps the item itself. */
int ld_deque_push(ld_deque *d, uint64_t item);

/* Owner only: the newest item, or LD_DEQUE_EMPTY. */
uint64_t ld_deque_take(ld_deque *d);

/* Any thread: the oldest item, or LD_DEQUE_EMPTY when empty or when another thief won
 * the race (try again, or elsewhere). */
uint64_t ld_deque_steal(ld_deque *d);

#endif
