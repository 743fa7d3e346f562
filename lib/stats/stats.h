/* stats.h: the summary JMH gives a set of iterations: mean and 99.9% CI half-width. */
#ifndef LD_STATS_H
#define LD_STATS_H

#include <stddef.h>

typedef struct ld_summary {
    double mean;
    double half_width; /* 99.9% Student-t half-width; 0 when n < 2 */
    size_t n;
} ld_summary;

/* The two-sided 99.9% Student-t quantile t(0.9995, df), df >= 1. */
double ld_t_quantile_999(size_t df);

ld_summary ld_summarize(const double *x, size_t n);

/* The p-th percentile (0..100) of n ascending values as JMH reports it; NaN if n = 0. */
double ld_percentile_jmh(const double *sorted, size_t n, double p);

#endif
