/* hist.h: a log-linear histogram of uint64 values (bytes, nanoseconds).
 *
 * Values below 64 have a bucket each; above, every power of two is cut into 64 buckets,
 * so the values of one bucket lie within 1/64 of its smallest. A quantile is reported as
 * the largest value of the bucket holding it, never above the maximum: never low, and
 * high by at most 1/64 of the true value. The count, the maximum and the sum (so the
 * mean) are exact; the sum wraps past 2^64.
 *
 * A plain struct that allocates nothing: it may live in any other struct and be copied
 * as a value, and all zero bytes are an empty histogram. Not thread-safe: one writer,
 * or a lock around it.
 */
#ifndef LD_HIST_H
#define LD_HIST_H

#include <stdint.h>

#define LD_HIST_SUB_BITS 6u
#define LD_HIST_SUB (1u << LD_HIST_SUB_BITS)
#define LD_HIST_BUCKETS (LD_HIST_SUB + (64u - LD_HIST_SUB_BITS) * LD_HIST_SUB)

typedef struct ld_hist {
    uint64_t count;
    uint64_t sum;
    uint64_t max;
    uint64_t bucket[LD_HIST_BUCKETS];
} ld_hist;

/* The bucket of v: v itself below LD_HIST_SUB, else its top LD_HIST_SUB_BITS + 1 bits
 * under the offset of its power of two. Inline, with ld_hist_add: schedulers count on
 * their hottest paths. */
static inline unsigned ld_hist_bucket(uint64_t v)
{
    unsigned top;

    if (v < LD_HIST_SUB)
        return (unsigned)v;
    top = 63u - (unsigned)__builtin_clzll(v);
    return LD_HIST_SUB + (top - LD_HIST_SUB_BITS) * LD_HIST_SUB +
           (unsigned)(v >> (top - LD_HIST_SUB_BITS)) - LD_HIST_SUB;
}

static inline void ld_hist_add(ld_hist *h, uint64_t v)
{
    h->count++;
    h->sum += v;
    if (v > h->max)
        h->max = v;
    h->bucket[ld_hist_bucket(v)]++;
}

/* Add v n times, as n calls of ld_hist_add would; nothing when n is 0. */
void ld_hist_add_n(ld_hist *h, uint64_t v, uint64_t n);

/* Add every value counted in src to dst. */
void ld_hist_merge(ld_hist *dst, const ld_hist *src);

uint64_t ld_hist_count(const ld_hist *h);

/* The exact mean; 0 when empty. */
double ld_hist_mean(const ld_hist *h);

/* The q-quantile (q in [0, 1], clamped): the ceil(q * count)-th smallest value, at least
 * the first, within 1/64 above it as said above; 0 when empty. */
uint64_t ld_hist_quantile(const ld_hist *h, double q);

/* The exact largest value; 0 when empty. */
uint64_t ld_hist_max(const ld_hist *h);

/* Forget every value. */
void ld_hist_reset(ld_hist *h);

#endif
