/* test_hist.c: the log-linear histogram (hist.h) against exact answers on known data.
 *
 * - Every quantile of 20,000 spread values, small ones included, is never below the
 *   exact order statistic and at most 1/64 above it; the count, mean and maximum are
 *   exact.
 * - Values below 64 come back exact; the largest uint64 lands in the last bucket and
 *   comes back as itself.
 * - Two halves merged equal the whole, a copy answers as the original, a reset or an
 *   all-zero histogram is empty.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#include "check.h"

#define N 20000

static uint64_t values[N];
static ld_hist whole, lo_half, hi_half;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Quadratic growth with a scramble: dense small values, sparse large ones, up to 2^40. */
static void make_values(void)
{
    for (uint64_t i = 0; i < N; i++)
        values[i] = (i * i * 2749u + (i * 40503u) % 977u) % (UINT64_C(1) << 40);
}

/* The exact q-quantile as hist.h defines it: the ceil(q * n)-th smallest, at least the
 * first. */
static uint64_t exact_quantile(const uint64_t *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    return sorted[(rank < 1 ? 1 : rank) - 1];
}

static void check_quantiles(const ld_hist *h, const uint64_t *sorted, size_t n)
{
    static const double qs[] = {0,    0.0001, 0.001, 0.01,  0.1,    0.25, 0.5,
                                0.75, 0.9,    0.99,  0.999, 0.9999, 1};

    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        uint64_t want = exact_quantile(sorted, n, qs[i]);
        uint64_t got = ld_hist_quantile(h, qs[i]);
        CHECK(got >= want && got - want <= want / 64, "q %.4f: got %llu, exact %llu",
              qs[i], (unsigned long long)got, (unsigned long long)want);
    }
}

static void test_known_data(void)
{
    uint64_t sum = 0, max = 0;
    uint64_t *sorted = malloc(sizeof values);

    make_values();
    for (size_t i = 0; i < N; i++) {
        ld_hist_add(&whole, values[i]);
        ld_hist_add(i % 2 ? &hi_half : &lo_half, values[i]);
        sum += values[i];
        max = values[i] > max ? values[i] : max;
    }
    CHECK(sorted != NULL, "malloc");
    if (sorted == NULL)
        return;
    memcpy(sorted, values, sizeof values);
    qsort(sorted, N, sizeof *sorted, cmp_u64);
    CHECK(ld_hist_count(&whole) == N, "count %llu",
          (unsigned long long)ld_hist_count(&whole));
    CHECK(ld_hist_max(&whole) == max, "max %llu, exact %llu",
          (unsigned long long)ld_hist_max(&whole), (unsigned long long)max);
    CHECK(ld_hist_mean(&whole) == (double)sum / N, "mean %.3f, exact %.3f",
          ld_hist_mean(&whole), (double)sum / N);
    check_quantiles(&whole, sorted, N);
    free(sorted);
}

/* Merging the halves gives the whole, bucket for bucket; a copy is a value. */
static void test_merge_copy(void)
{
    ld_hist merged = {0}, copy;

    ld_hist_merge(&merged, &lo_half);
    ld_hist_merge(&merged, &hi_half);
    CHECK(memcmp(&merged, &whole, sizeof merged) == 0, "two halves merged differ");
    copy = whole;
    CHECK(ld_hist_quantile(&copy, 0.99) == ld_hist_quantile(&whole, 0.99), "copy p99");
}

/* Below 64 each value is its own bucket; the top of the range does not wrap. */
static void test_edges(void)
{
    ld_hist h = {0};
    uint64_t small[64];

    for (uint64_t v = 0; v < 64; v++) {
        ld_hist_add(&h, v);
        small[v] = v;
    }
    for (int i = 0; i <= 100; i++) {
        double q = i / 100.0;
        CHECK(ld_hist_quantile(&h, q) == exact_quantile(small, 64, q),
              "small q %.2f: %llu", q, (unsigned long long)ld_hist_quantile(&h, q));
    }
    CHECK(ld_hist_bucket(UINT64_MAX) == LD_HIST_BUCKETS - 1, "last bucket %u",
          ld_hist_bucket(UINT64_MAX));
    ld_hist_reset(&h);
    CHECK(ld_hist_count(&h) == 0 && ld_hist_quantile(&h, 0.5) == 0 &&
              ld_hist_max(&h) == 0 && ld_hist_mean(&h) == 0,
          "a reset histogram is not empty");
    ld_hist_add(&h, UINT64_MAX);
    ld_hist_add(&h, UINT64_MAX - 1);
    CHECK(ld_hist_quantile(&h, 1) == UINT64_MAX, "top %llu",
          (unsigned long long)ld_hist_quantile(&h, 1));
    CHECK(ld_hist_quantile(&h, 0) == UINT64_MAX, "the top bucket's p0 is its top");
}

int main(void)
{
    test_known_data();
    test_merge_copy();
    test_edges();
    if (failures != 0) {
        fprintf(stderr, "test_hist: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_hist: quantiles within 1/64 of %d known values\n", N);
    return 0;
}
