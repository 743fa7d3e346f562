/* deadlines.h: deadlines at nanosecond resolution on a uv_loop.
 *
 * A set of deadlines belongs to one uv_loop_t and is used on that loop's thread only.
 * A deadline is an opaque item and an absolute time in nanoseconds on uv_hrtime()'s
 * clock (CLOCK_MONOTONIC). Once that time has passed, the set calls fire(item, ctx),
 * from inside uv_run, or from ld_deadlines_expire. libuv's own timers count whole
 * milliseconds; these do not.
 *
 * When. A deadline never fires early. Its time is rounded up to a tick of
 * LD_DEADLINES_TICK_NS (16.4 µs), and it fires at the first look at the clock after
 * that tick: the set looks whenever the loop wakes, and an owner that runs between
 * turns of the loop can look more often with ld_deadlines_expire. A loop that would
 * otherwise wait is woken by one timerfd at most once in LD_DEADLINES_WAKE_NS
 * (131 µs), for all the deadlines due by then at once: a few µs of system calls per
 * wake-up. A deadline after a quiet spell is woken for on its tick; one among dense
 * deadlines fires up to about 150 µs late, plus the kernel's timer slack and whatever
 * else the loop's thread is doing.
 *
 * Cost. Adding and firing a deadline are O(1) however many there are (a hierarchical
 * timing wheel). The timerfd is set only when the loop is about to poll and the
 * earliest deadline has moved earlier, or the timer has fired: a busy loop makes
 * almost no timer system calls.
 *
 * Liveness. Like an active uv_timer, a set with deadlines pending keeps its loop
 * alive, and an empty one does not.
 *
 * Functions return 0 or a negative errno.
 */
#ifndef LD_DEADLINES_H
#define LD_DEADLINES_H

#include <stddef.h>
#include <stdint.h>

struct uv_loop_s; /* libuv's loop: include <uv.h> to use one */

#define LD_DEADLINES_TICK_NS 16384u
#define LD_DEADLINES_WAKE_NS 131072u

typedef struct ld_deadlines ld_deadlines;
typedef void (*ld_deadline_fire)(void *item, void *ctx);
typedef void (*ld_deadline_fire_n)(void *const *items, size_t n, void *ctx);

/* A set on loop whose deadlines fire as fire(item, ctx). -ENOMEM, or a negative errno
 * from timerfd_create or libuv. */
int ld_deadlines_open(ld_deadlines **out, struct uv_loop_s *loop, ld_deadline_fire fire,
                      void *ctx);

/* The same, for an owner that takes deadlines due in one tick together: they fire as
 * fire_n(items, n, ctx), n >= 1 of them in order, the array good only for the call.
 * A close from fire_n stops the blocks after the one it was given. */
int ld_deadlines_open_n(ld_deadlines **out, struct uv_loop_s *loop,
                        ld_deadline_fire_n fire_n, void *ctx);

/* Fire item once at_ns has passed. Returns 0; 1, adding nothing, when at_ns lies
 * before the set's last look at the clock (its open, or the last expire), so that the
 * caller takes the item as fired now; -ENOMEM, adding nothing, when the set could not
 * grow. The clock is not read: a deadline that has just passed is added, and fires at
 * the next look. Callable from fire. */
int ld_deadlines_add(ld_deadlines *d, void *item, uint64_t at_ns);

/* Fire item ns after the set's next look at the clock, which fixes its deadline: the
 * next ld_deadlines_expire, or the loop's next turn. The clock is not read here, which
 * saves one read per deadline for an owner that adds many between two looks. It never
 * fires early; it fires later than a deadline taken from the clock now by at most the
 * time to that look. Returns 0; 1, adding nothing, when ns is 0, so that the caller
 * takes the item as fired now; -ENOMEM, adding nothing, when the set could not grow.
 * Callable from fire. */
int ld_deadlines_add_after(ld_deadlines *d, void *item, uint64_t ns);

/* Fix the spans added since the last look at now_ns + ns, then fire every deadline
 * that has passed by now_ns, in deadline order (items due in the same tick in the
 * order they were added). now_ns is a uv_hrtime() reading taken after every
 * ld_deadlines_add_after call since the last look, so that no span starts early. */
void ld_deadlines_expire(ld_deadlines *d, uint64_t now_ns);

/* Deadlines and spans added and not yet fired. */
size_t ld_deadlines_pending(const ld_deadlines *d);

/* Drop every pending deadline unfired, and free the set once the loop has run the
 * close callbacks of its handles: the owner must run the loop again before closing it
 * (uv_run with UV_RUN_NOWAIT is enough). Callable from fire; no deadline fires after
 * it. */
void ld_deadlines_close(ld_deadlines *d);

#endif
