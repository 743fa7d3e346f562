/* stats.c: mean and Student-t confidence half-width, as JMH reports iterations. */
#include "stats.h"

#include <math.h>

/* t(0.9995, df) for df 1..30, from the standard tables; beyond 30 the few listed
 * points are interpolated in 1/df, which is accurate to three decimals. */
static const double t_small[30] = {
    636.619, 31.599, 12.924, 8.610, 6.869, 5.959, 5.408, 5.041, 4.781, 4.587,
    4.437,   4.318,  4.221,  4.140, 4.073, 4.015, 3.965, 3.922, 3.883, 3.850,
    3.819,   3.792,  3.768,  3.745, 3.725, 3.707, 3.690, 3.674, 3.659, 3.646};
static const double t_large_df[] = {30, 40, 60, 120, INFINITY};
static const double t_large[] = {3.646, 3.551, 3.460, 3.373, 3.291};

double ld_t_quantile_999(size_t df)
{
    if (df == 0)
        return INFINITY;
    if (df <= 30)
        return t_small[df - 1];
    for (int i = 1; i < 5; i++) {
        if ((double)df <= t_large_df[i]) {
            double x = 1.0 / (double)df, x0 = 1.0 / t_large_df[i - 1],
                   x1 = 1.0 / t_large_df[i];
            return t_large[i - 1] + (t_large[i] - t_large[i - 1]) * (x - x0) / (x1 - x0);
        }
    }
    return t_large[4];
}

ld_summary ld_summarize(const double *x, size_t n)
{
    ld_summary s = {.n = n};
    if (n == 0)
        return s;
    for (size_t i = 0; i < n; i++)
        s.mean += x[i];
    s.mean /= (double)n;
    if (n < 2)
        return s;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - s.mean) * (x[i] - s.mean);
    double sd = sqrt(ss / (double)(n - 1));
    s.half_width = ld_t_quantile_999(n - 1) * sd / sqrt((double)n);
    return s;
}

/* Apache Commons Math's default (legacy) estimate, which JMH's scorePercentiles use:
 * the (n + 1)p-th value, interpolated, clamped to the smallest and the largest. */
double ld_percentile_jmh(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    double pos = p * (double)(n + 1) / 100.0;
    if (pos < 1)
        return sorted[0];
    if (pos >= (double)n)
        return sorted[n - 1];
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;
    return sorted[lo - 1] + frac * (sorted[lo] - sorted[lo - 1]);
}
