/* hist.c: the log-linear histogram (see hist.h). */
#include <math.h>
#include <string.h>

#include "hist.h"

/* The largest value in bucket b, so that a quantile is never reported low. Written as
 * a sum, so the last bucket's top is 2^64 - 1 without a shift past the width. */
static uint64_t hist_bucket_top(unsigned b)
{
    unsigned shift;
    uint64_t sub;

    if (b < LD_HIST_SUB)
        return b;
    shift = (b - LD_HIST_SUB) / LD_HIST_SUB;
    sub = LD_HIST_SUB + (b - LD_HIST_SUB) % LD_HIST_SUB;
    return (sub << shift) + ((UINT64_C(1) << shift) - 1);
}

void ld_hist_add_n(ld_hist *h, uint64_t v, uint64_t n)
{
    if (n == 0)
        return;
    h->count += n;
    h->sum += v * n;
    if (v > h->max)
        h->max = v;
    h->bucket[ld_hist_bucket(v)] += n;
}

void ld_hist_merge(ld_hist *dst, const ld_hist *src)
{
    unsigned b;

    dst->count += src->count;
    dst->sum += src->sum;
    if (src->max > dst->max)
        dst->max = src->max;
    for (b = 0; b < LD_HIST_BUCKETS; b++)
        dst->bucket[b] += src->bucket[b];
}

uint64_t ld_hist_count(const ld_hist *h)
{
    return h->count;
}

double ld_hist_mean(const ld_hist *h)
{
    return h->count != 0 ? (double)h->sum / (double)h->count : 0.0;
}

/* The bucket that holds the rank-th smallest value, walked from the bottom. */
uint64_t ld_hist_quantile(const ld_hist *h, double q)
{
    uint64_t rank, seen = 0;
    unsigned b;

    if (h->count == 0)
        return 0;
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    rank = (uint64_t)ceil(q * (double)h->count);
    rank = rank < 1 ? 1 : rank > h->count ? h->count : rank;
    for (b = 0; b < LD_HIST_BUCKETS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) {
            uint64_t top = hist_bucket_top(b);
            return top < h->max ? top : h->max;
        }
    }
    return h->max;
}

uint64_t ld_hist_max(const ld_hist *h)
{
    return h->max;
}

void ld_hist_reset(ld_hist *h)
{
    memset(h, 0, sizeof *h);
}
