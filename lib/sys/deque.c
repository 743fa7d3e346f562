/* deque.c: the Chase-Lev deque, as Le, Pop, Cohen and Zappa Nardelli (PPoPP 2013)
 * give it for C11 atomics. The fixed capacity suits fork-join splitting, whose deque
 * depth never exceeds log2 of the range it started with. */
#include "deque.h"

#include <errno.h>

void ld_deque_init(ld_deque *d)
{
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    for (int i = 0; i < LD_DEQUE_CAPACITY; i++)
        atomic_init(&d->item[i], 0);
}

int ld_deque_push(ld_deque *d, uint64_t item)
{
    long long b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    long long t = atomic_load_explicit(&d->top, memory_order_acquire);
    if (b - t >= LD_DEQUE_CAPACITY)
        return -ENOSPC;
    atomic_store_explicit(&d->item[b % LD_DEQUE_CAPACITY], item, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    return 0;
}

uint64_t ld_deque_take(ld_deque *d)
{
    long long b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
    atomic_store_explicit(&d->bottom, b, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    long long t = atomic_load_explicit(&d->top, memory_order_relaxed);
    if (t > b) {
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
        return LD_DEQUE_EMPTY;
    }
    uint64_t item =
        atomic_load_explicit(&d->item[b % LD_DEQUE_CAPACITY], memory_order_relaxed);
    if (t == b) {
        /* The last item: race the thieves for it. */
        if (!atomic_compare_exchange_strong_explicit(
                &d->top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed))
            item = LD_DEQUE_EMPTY;
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    }
    return item;
}

uint64_t ld_deque_steal(ld_deque *d)
{
    long long t = atomic_load_explicit(&d->top, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst);
    long long b = atomic_load_explicit(&d->bottom, memory_order_acquire);
    if (t >= b)
        return LD_DEQUE_EMPTY;
    uint64_t item =
        atomic_load_explicit(&d->item[t % LD_DEQUE_CAPACITY], memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return LD_DEQUE_EMPTY;
    return item;
}
