/* gt_overflow.h: reporting a green thread's stack overflow (internal to runtime/).
 *
 * An overflow is caught by a stack's guard (gt_stack.h): a fault in its guard page, or
 * a broken canary. Either way it is reported on stderr as
 *
 *   loomdist: green thread N overflowed its S KiB stack
 *
 * and the process then dies of SIGSEGV, as it would have without the report. A fault
 * is caught by one process-wide SIGSEGV handler that runs on the faulting carrier's
 * signal stack, since an overflowed thread has no stack left to run it on; any fault
 * that is not an overflow goes on to the handler it displaced.
 *
 * This layer knows stacks, not schedulers: the scheduler hands it the function that
 * says which stack the calling thread runs on.
 */
#ifndef LD_GT_OVERFLOW_H
#define LD_GT_OVERFLOW_H

#include <signal.h>
#include <stdint.h>

#include "gt_stack.h"

/* The stack of the green thread running on the calling thread (in copy mode, the run
 * stack), with its id in *id; NULL outside a green thread. The SIGSEGV handler calls
 * it, so it may only read, and nothing that is not async-signal-safe. */
typedef const ld_stack *(*ld_overflow_running_fn)(uint64_t *id);

/* Per carrier thread: the signal stack the handler runs on. */
typedef struct ld_overflow_watch {
    void *altstack; /* ours, or NULL when the thread already had one */
    size_t altsize;
    stack_t prev;
} ld_overflow_watch;

/* On the carrier thread: make sure it has a signal stack, and install the process-wide
 * SIGSEGV handler, which asks `running` what runs on a faulting thread. The handler is
 * installed once and chains to whichever handler it displaced; every caller must pass
 * the same function. A negative errno from sigaltstack or mmap. */
int ld_overflow_watch_start(ld_overflow_watch *w, ld_overflow_running_fn running);

/* On the same thread: put back the signal stack it had before, and unmap ours. */
void ld_overflow_watch_stop(ld_overflow_watch *w);

/* Report an overflow of green thread `id` on stack st, found at a switch (a broken
 * canary), and die of SIGSEGV. */
_Noreturn void ld_overflow_die(uint64_t id, const ld_stack *st);

#endif
