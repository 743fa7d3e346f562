/* test_percentiles.c: ld_percentiles (metrics.h) finds by radix selection exactly what
 * the nearest rank of a sorted copy gives: the median, the 99th percentile and the
 * maximum, over every length from 0 to 300 and a few large ones, of random values
 * (negative ones among them, over 52 bits), values with many ties, values at both
 * ends of int64_t, and already sorted and reversed ones; it never changes them. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics.h"
#include "pcg.h"

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The nearest rank of q over the sorted s[0..n). */
static int64_t sorted_rank(const int64_t *s, size_t n, double q)
{
    size_t r = (size_t)ceil(q * (double)n);
    return s[(r < 1 ? 1 : r > n ? n : r) - 1];
}

static int64_t value_at(const void *v, size_t i)
{
    return ((const int64_t *)v)[i];
}

enum shape { RANDOM, TIES, EXTREMES, SORTED, REVERSED, SHAPES };

static void fill(int64_t *v, size_t n, enum shape shape, ld_pcg32 *rng)
{
    for (size_t i = 0; i < n; i++) {
        int64_t x = (int64_t)ld_pcg32_next(rng) << 20 ^ ld_pcg32_next(rng);
        v[i] = shape == TIES       ? x % 7
               : shape == EXTREMES ? (x & 1 ? INT64_MAX - x % 5 : INT64_MIN + x % 3)
               : shape == SORTED   ? (int64_t)i
               : shape == REVERSED ? (int64_t)(n - i)
                                   : x - (INT64_C(1) << 50);
    }
}

static void check_one(size_t n, enum shape shape, ld_pcg32 *rng)
{
    int64_t *v = calloc(n ? n : 1, sizeof *v), *s = malloc((n ? n : 1) * sizeof *s);
    fill(v, n, shape, rng);
    memcpy(s, v, n * sizeof *v);
    ld_pct3 p;
    CHECK(ld_percentiles(n, value_at, v, &p) == 0, "n %zu: no memory", n);
    CHECK(n == 0 || memcmp(v, s, n * sizeof *v) == 0, "n %zu: values changed", n);
    qsort(s, n, sizeof *s, cmp);
    int64_t want50 = n ? sorted_rank(s, n, 0.50) : 0,
            want99 = n ? sorted_rank(s, n, 0.99) : 0;
    int64_t wantmax = n ? s[n - 1] : 0;
    CHECK(p.p50 == want50 && p.p99 == want99 && p.max == wantmax,
          "n %zu shape %d: %lld %lld %lld, want %lld %lld %lld", n, (int)shape,
          (long long)p.p50, (long long)p.p99, (long long)p.max, (long long)want50,
          (long long)want99, (long long)wantmax);
    free(v);
    free(s);
}

int main(void)
{
    ld_pcg32 rng;
    ld_pcg32_seed(&rng, 42, 7);
    static const size_t large[] = {1000, 4096, 100001};
    for (int shape = 0; shape < SHAPES; shape++) {
        for (size_t n = 0; n <= 300; n++)
            check_one(n, (enum shape)shape, &rng);
        for (size_t k = 0; k < sizeof large / sizeof large[0]; k++)
            check_one(large[k], (enum shape)shape, &rng);
    }
    return failures != 0;
}
