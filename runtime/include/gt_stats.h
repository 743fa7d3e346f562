/* gt_stats.h: what a scheduler's green threads hold in stack capacity, and what they
 * use of it.
 *
 * A parked thread keeps capacity for its frames: in copy mode its chunk's room and a
 * heap spill that grows to the deepest stack it has frozen; with own stacks, the pages
 * of its stack it has touched, which stay resident. Capacity is fixed when it grows,
 * so a thread that once parked deep keeps the room for it while it parks shallow;
 * ld_sched_config's trim_after ("trim after K small freezes", gt.h) gives it back.
 *
 * A scheduler counts at every switch-out of a thread that will resume (a freeze: a
 * park, sleep, yield, join or lock wait), a few additions each. In copy mode the spill
 * is sized for the frames there and then, though their copy waits until another
 * thread needs the run stack. With own stacks the depth is seen at switch-outs only, so
 * a thread's deeper calls between two of them are not seen.
 */
#ifndef LD_GT_STATS_H
#define LD_GT_STATS_H

#include <stdint.h>

#include "gt.h"
#include "hist.h"

typedef struct ld_gt_stack_stats {
    uint64_t freezes;         /* parks of a green thread counted (a switch-out of a thread
                                 that will resume) */
    uint64_t chunk_allocs;    /* copy: spills allocated from none; own: stacks mapped
                                 fresh (not from a cache or depot) */
    uint64_t chunk_reuses;    /* copy: freezes that fit the room and spill the thread
                                 already had; own: stacks taken from a cache or depot */
    uint64_t chunk_grows;     /* copy: spills replaced by a larger one; own: 0 */
    uint64_t chunk_trims;     /* capacity given back by the trim policy (copy: spill
                                 shrunk or freed; own: madvise) */
    uint64_t bytes_allocated; /* copy: bytes of spill allocated, each allocation or
                                 growth counting its new size (the analog of the JVM's
                                 "StackChunk total bytes allocated"); own: bytes of stack
                                 first touched (high-water growth) */
    uint64_t bytes_trimmed;   /* given back by trims */
    uint64_t bytes_resident;  /* now: copy: room + spill capacity of every live thread;
                                 own: touched (high-water, page-rounded) bytes of every
                                 live thread's stack. Counted incrementally, not by a
                                 scan */
    ld_hist capacity;         /* at each freeze: that thread's capacity in bytes (copy:
                                 LD chunk room + spill_cap; own: its stack's high-water
                                 depth rounded up to pages) */
    ld_hist frozen;           /* at each freeze: the bytes actually in use (copy: frozen
                                 len; own: top - sp) */
} ld_gt_stack_stats;

/* On s's own thread: what s has counted since it was created or last reset. */
void ld_sched_stack_stats(const ld_sched *s, ld_gt_stack_stats *out);

/* On s's own thread: in copy mode, the freezes whose frames did not fit their chunk's
 * room and went to a spill made or grown for them (chunk_allocs + chunk_grows); 0 with
 * own stacks. Unlike ld_sched_stack_stats, whose histograms are 60 KB, a green thread
 * may call it on its own small stack. */
uint64_t ld_sched_stack_spills(const ld_sched *s);

/* On s's own thread: count afresh (bytes_resident is kept, it is a level, not a
 * count). */
void ld_sched_stack_stats_reset(ld_sched *s);

#endif
