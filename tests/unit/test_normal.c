/* test_normal.c: the distribution of ld_pcg32_normal and ld_pcg32_double, and the
 * fills' sameness with single draws.
 *
 * 10^6 draws each. Every moment is held to five standard errors of its estimator under
 * the true distribution, so a correct generator fails with odds below 10^-6 per
 * check, while a wrong table, a biased tail or a sign error shows at once. The
 * Kolmogorov-Smirnov statistic must be below its 1% critical value, 1.628/sqrt(n).
 */
#include "pcg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1000000

static int failures;

static void check(int ok, const char *what, double got, double want, double tol)
{
    printf("%-28s %12.6f  want %12.6f +- %.6f  %s\n", what, got, want, tol,
           ok ? "ok" : "FAIL");
    failures += !ok;
}

static void near(const char *what, double got, double want, double tol)
{
    check(fabs(got - want) <= tol, what, got, want, tol);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Mean, variance, skewness and excess kurtosis, the central moments accumulated around
 * the sample mean. */
static void moments(const double *x, size_t n, double m[4])
{
    double mean = 0, m2 = 0, m3 = 0, m4 = 0;
    for (size_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - mean, d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    m2 /= (double)n;
    m3 /= (double)n;
    m4 /= (double)n;
    m[0] = mean;
    m[1] = m2;
    m[2] = m3 / pow(m2, 1.5);
    m[3] = m4 / (m2 * m2) - 3.0;
}

/* The largest gap between the empirical CDF of x (sorted here) and cdf. */
static double ks_statistic(double *x, size_t n, double (*cdf)(double))
{
    qsort(x, n, sizeof *x, cmp_double);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double f = cdf(x[i]);
        double above = (double)(i + 1) / (double)n - f, below = f - (double)i / (double)n;
        d = fmax(d, fmax(above, below));
    }
    return d;
}

static double normal_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

static double uniform_cdf(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* Lag-1 correlation of consecutive draws; 0 with standard error 1/sqrt(n). */
static double lag1(const double *x, size_t n, double mean, double var)
{
    double s = 0;
    for (size_t i = 0; i + 1 < n; i++)
        s += (x[i] - mean) * (x[i + 1] - mean);
    return s / (double)(n - 1) / var;
}

/* Standard errors for n draws of N(0,1): mean 1/sqrt(n), variance sqrt(2/n), skewness
 * sqrt(6/n), excess kurtosis sqrt(24/n). */
static void test_normal_moments(double *x)
{
    double m[4], n = N;
    moments(x, N, m);
    near("normal mean", m[0], 0.0, 5 / sqrt(n));
    near("normal variance", m[1], 1.0, 5 * sqrt(2 / n));
    near("normal skewness", m[2], 0.0, 5 * sqrt(6 / n));
    near("normal excess kurtosis", m[3], 0.0, 5 * sqrt(24 / n));
    near("normal lag-1 correlation", lag1(x, N, m[0], m[1]), 0.0, 5 / sqrt(n));
}

/* The ziggurat's tail starts at R = 3.654: about 258 of 10^6 draws fall beyond it, a
 * Poisson count held to five standard deviations. No draw can pass 13.7. */
static void test_normal_tail(const double *x)
{
    size_t beyond = 0;
    double largest = 0;
    for (size_t i = 0; i < N; i++) {
        beyond += fabs(x[i]) > 3.6541528853610088;
        largest = fmax(largest, fabs(x[i]));
    }
    double want = N * erfc(3.6541528853610088 / sqrt(2.0));
    near("normal draws beyond R", (double)beyond, want, 5 * sqrt(want));
    check(largest < 13.7, "normal largest |z|", largest, 13.7, 0);
}

/* The batch fill is the same sequence as single draws, and leaves the same state. */
static void test_normal_fill(void)
{
    ld_pcg32 a, b;
    ld_pcg32_seed(&a, 2024, 7);
    b = a;
    double batch[4099];
    ld_pcg32_normal_fill(&a, batch, 4099);
    size_t same = 0;
    for (size_t i = 0; i < 4099; i++) {
        double one = ld_pcg32_normal(&b);
        same += memcmp(&one, &batch[i], sizeof one) == 0;
    }
    same += a.state == b.state;
    check(same == 4100, "fill equals single draws", (double)same, 4100, 0);
}

/* Whether this CPU runs copy w of the wide fill; the scalar one runs everywhere. */
static int wide_runs(enum ld_pcg_wide w)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (w == LD_PCG_WIDE_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#endif
    return w == LD_PCG_WIDE_SCALAR;
}

/* Every copy of the wide fill this CPU runs is the batch fill, bit for bit, state too:
 * 300 streams, at every length from 0 to 40 (blocks cut short, tails alone) and at the
 * VaR kernel's 20,000 (where about 300 attempts a fill take the slow path). */
static void test_normal_fill_wide(void)
{
    static double want[20000], got[20000];
    const enum ld_pcg_wide paths[] = {LD_PCG_WIDE_SCALAR, LD_PCG_WIDE_AVX512};
    const char *const names[] = {"scalar", "avx512"};
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        if (!wide_runs(paths[p]))
            continue;
        size_t fills = 0, same = 0;
        for (uint64_t stream = 0; stream < 300; stream++) {
            for (size_t n = 0; n <= 41; n++) {
                size_t len = n == 41 ? 20000 : n;
                ld_pcg32 a, b;
                ld_pcg32_seed(&a, 1000 + stream, stream * 2 + 1);
                b = a;
                ld_pcg32_normal_fill(&a, want, len);
                ld_pcg32_normal_fill_wide(&b, got, len, paths[p]);
                fills++;
                same += memcmp(want, got, len * sizeof *want) == 0 && a.state == b.state;
            }
        }
        char what[48];
        snprintf(what, sizeof what, "wide fill (%s) equals fill", names[p]);
        check(same == fills, what, (double)same, (double)fills, 0);
    }
}

static void test_uniform(double *u)
{
    ld_pcg32 rng;
    ld_pcg32_seed(&rng, 99, 3);
    size_t outside = 0;
    for (size_t i = 0; i < N; i++) {
        u[i] = ld_pcg32_double(&rng);
        outside += !(u[i] >= 0.0 && u[i] < 1.0);
    }
    double m[4], n = N;
    moments(u, N, m);
    check(outside == 0, "uniform outside [0, 1)", (double)outside, 0, 0);
    near("uniform mean", m[0], 0.5, 5 * sqrt(1 / 12.0 / n));
    /* var of the sample variance: (mu4 - sigma^4)/n = (1/80 - 1/144)/n */
    near("uniform variance", m[1], 1 / 12.0, 5 * sqrt((1 / 80.0 - 1 / 144.0) / n));
    double d = ks_statistic(u, N, uniform_cdf);
    check(d < 1.628 / sqrt(n), "uniform KS statistic", d, 0, 1.628 / sqrt(n));
}

int main(void)
{
    double *x = malloc(N * sizeof *x);
    if (x == NULL)
        return 1;
    ld_pcg32 rng;
    ld_pcg32_seed(&rng, 42, 54);
    ld_pcg32_normal_fill(&rng, x, N);
    test_normal_moments(x);
    test_normal_tail(x);
    double d = ks_statistic(x, N, normal_cdf);
    check(d < 1.628 / sqrt((double)N), "normal KS statistic", d, 0,
          1.628 / sqrt((double)N));
    test_normal_fill();
    test_normal_fill_wide();
    test_uniform(x);
    free(x);
    if (failures != 0) {
        fprintf(stderr, "test_normal: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_normal: ok\n");
    return 0;
}
