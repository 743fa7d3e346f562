/* gt_sched.h: what the scheduler offers the rest of the green-thread runtime (internal
 * to runtime/), beyond the public contract in gt.h.
 *
 * Suspend and resume are a second wake-up channel, apart from park and unpark, for the
 * runtime's own blocking primitives (ld_gt_mutex). A resume wakes only a suspend and an
 * unpark wakes only a park, so neither can eat the other's wake-up.
 */
#ifndef LD_GT_SCHED_H
#define LD_GT_SCHED_H

#include "gt.h"

/* In a green thread: wait for one ld_gt_resume on this thread. A resume that comes
 * first is remembered, as unpark is for park. Every suspend must be paired with exactly
 * one resume by its caller's protocol; there are no spurious returns. */
void ld_gt_suspend(void);

/* Wake a green thread from ld_gt_suspend. Safe from any OS thread. */
void ld_gt_resume(ld_gt *g);

/* The scheduler of the calling OS thread, or NULL: for objects that belong to one
 * carrier's loop (gt_io.c), to tell whether their caller is on it. */
ld_sched *ld_sched_self(void);

/* A link in the thread's struct for the queue of whatever it waits on, so that no
 * queue entry lives on a stack that copy mode may move. Owned by that queue. */
ld_gt **ld_gt_wait_next(ld_gt *g);

#endif
