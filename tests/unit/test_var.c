/* test_var.c: the VaR kernel and the trade book it reads.
 *
 * Accuracy. With n = 20,000 draws the VaR is the 5% sample quantile of the P&L. The
 * sample p-quantile has standard deviation sqrt(p(1 - p)/n)/phi(z_p) in z: with
 * p = 0.05, phi(z_p) = 0.10314, that is 0.01494. The P&L quantile is
 * notional*(exp(m + sigma*z) - 1), m = mu - sigma^2/2, so the VaR moves by
 * sigma*exp(m + sigma*z_p)*0.01494 = 0.02*0.9676*0.01494 = 2.89e-4 of the notional,
 * on a VaR of 3.24% of it: a relative standard deviation of 0.89% (computed below,
 * not assumed). 3% is 3.4 of them, so a correct kernel fails a given trade with odds
 * under 1 in 1,000, and a wrong drift, volatility, sign or index shows at once. The
 * mean ratio over 400 trades is held tighter, to 5 standard errors.
 *
 * Exactness. The sort and select kernels must agree bit for bit, on runs of every
 * size, including the runs where the select kernel's band misses and it falls back.
 * ld_var_order_stat is checked against qsort on arrays built to be hard: ties,
 * sorted, reversed, clustered, and spread too wide to scale.
 */
#include "book.h"
#include "var_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define SEED 42
#define SIMS 20000u

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The relative standard deviation of the VaR estimate, from the quantile's. */
static double var_relative_sd(uint32_t n)
{
    const double p = 0.05, z = -1.6448536269514722;
    double phi = exp(-0.5 * z * z) / sqrt(2 * M_PI);
    double sd_z = sqrt(p * (1 - p) / n) / phi;
    double m = LD_VAR_DRIFT - 0.5 * LD_VAR_VOL * LD_VAR_VOL, q = exp(m + LD_VAR_VOL * z);
    return LD_VAR_VOL * q * sd_z / (1 - q);
}

/* The study's algorithm written plainly, with libm's exp and qsort. */
static double var_reference(const ld_trade *t, uint32_t sims, double *pnl)
{
    double price = (double)t->price_cents / 100.0;
    double notional = (double)ld_trade_notional(t) / 100.0;
    ld_pcg32 rng = ld_trade_stream(SEED, t->id, LD_STREAM_VAR);
    for (uint32_t i = 0; i < sims; i++) {
        double z = ld_pcg32_normal(&rng);
        double sim =
            price * exp((LD_VAR_DRIFT - 0.5 * LD_VAR_VOL * LD_VAR_VOL) + LD_VAR_VOL * z);
        pnl[i] = notional * ((sim - price) / price);
    }
    qsort(pnl, sims, sizeof *pnl, cmp_double);
    return -pnl[(uint32_t)((1 - LD_VAR_CONFIDENCE) * sims)];
}

static void test_accuracy(const ld_trade *book, double *scratch)
{
    double rsd = var_relative_sd(SIMS);
    printf("relative sd of the VaR at %u draws: %.4f%%; tolerance 3%% = %.1f sd\n", SIMS,
           100 * rsd, 0.03 / rsd);
    CHECK(0.03 / rsd > 3.0, "3%% is only %.2f standard deviations", 0.03 / rsd);
    double ratio_sum = 0, worst = 0;
    const int trades = 400;
    for (int i = 0; i < trades; i++) {
        double var = ld_var_trade(&book[i], SEED, SIMS, LD_VAR_SORT, scratch);
        double exact = ld_var_closed_form(&book[i]);
        double rel = var / exact - 1;
        ratio_sum += var / exact;
        worst = fmax(worst, fabs(rel));
        if (i < 12)
            CHECK(fabs(rel) <= 0.03, "trade %d: VaR %.2f vs closed form %.2f (%.2f%%)", i,
                  var, exact, 100 * rel);
    }
    double mean = ratio_sum / trades, tol = 5 * rsd / sqrt(trades);
    printf("VaR / closed form over %d trades: mean %.5f (+- %.5f), worst %.2f%%\n",
           trades, mean, tol, 100 * worst);
    CHECK(fabs(mean - 1) <= tol, "mean VaR ratio %.5f off 1 by more than %.5f", mean,
          tol);
}

/* The vector exp and the study's formula against libm and qsort: the same draws, so
 * only rounding may differ, by a few parts in 10^15. */
static void test_reference(const ld_trade *book, double *scratch)
{
    double *pnl = malloc(SIMS * sizeof *pnl), worst = 0;
    if (pnl == NULL)
        return;
    for (int i = 0; i < 50; i++) {
        double ref = var_reference(&book[i], SIMS, pnl);
        double var = ld_var_trade(&book[i], SEED, SIMS, LD_VAR_SORT, scratch);
        worst = fmax(worst, fabs(var - ref) / ref);
    }
    printf("kernel vs libm exp + qsort: worst relative difference %.2e\n", worst);
    CHECK(worst < 1e-13, "kernel differs from the plain algorithm by %.3e", worst);
    free(pnl);
}

/* Sort and select on the same trade and run length, bit for bit, and each twice. */
static int kernels_agree(const ld_trade *t, uint32_t sims, double *scratch)
{
    double sort = ld_var_trade(t, SEED, sims, LD_VAR_SORT, scratch);
    double select = ld_var_trade(t, SEED, sims, LD_VAR_SELECT, scratch);
    double again = ld_var_trade(t, SEED, sims, LD_VAR_SELECT, scratch);
    return memcmp(&sort, &select, sizeof sort) == 0 &&
           memcmp(&select, &again, sizeof sort) == 0 && !isnan(sort);
}

/* 3,000 runs of 4,096 draws: the select kernel's band misses about one run in 400, so
 * its fallback is exercised too. Then full-length runs and odd lengths. */
static void test_kernels_agree(const ld_trade *book, double *scratch)
{
    int bad = 0;
    for (int i = 0; i < 3000; i++)
        bad += !kernels_agree(&book[i], 4096, scratch);
    for (int i = 0; i < 200; i++)
        bad += !kernels_agree(&book[i], SIMS, scratch);
    const uint32_t lengths[] = {1, 2, 3, 7, 20, 21, 1999, 2047, 2048, 2049, 4097, 19999};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
        for (int i = 0; i < 20; i++)
            bad += !kernels_agree(&book[i], lengths[l], scratch);
    ld_trade odd = book[0];
    odd.price_cents = -odd.price_cents; /* so a negative notional: P&L falls with z */
    bad += !kernels_agree(&odd, SIMS, scratch);
    CHECK(bad == 0, "sort and select disagree on %d runs", bad);
}

/* The same trade gives the same VaR from any buffer, and after other trades. */
static void test_determinism(const ld_trade *book, double *scratch)
{
    double *other = malloc(SIMS * sizeof *other);
    if (other == NULL)
        return;
    double first = ld_var_trade(&book[7], SEED, SIMS, LD_VAR_SORT, scratch);
    (void)ld_var_trade(&book[8], SEED, SIMS, LD_VAR_SORT, scratch);
    double second = ld_var_trade(&book[7], SEED, SIMS, LD_VAR_SORT, other);
    CHECK(memcmp(&first, &second, sizeof first) == 0,
          "VaR of one trade changed: %.17g %.17g", first, second);
    double reseeded = ld_var_trade(&book[7], SEED + 1, SIMS, LD_VAR_SORT, other);
    CHECK(reseeded != first, "another seed gave the same VaR");
    CHECK(isnan(ld_var_trade(&book[0], SEED, 0, LD_VAR_SORT, scratch)),
          "0 sims accepted");
    CHECK(isnan(ld_var_trade(&book[0], SEED, SIMS, LD_VAR_SORT, NULL)),
          "no scratch accepted");
    CHECK(isnan(ld_var_trade(&book[0], SEED, SIMS, (enum ld_var_kernel)7, scratch)),
          "an unknown kernel accepted");
    free(other);
}

/* Both kernels of ld_var_order_stat against qsort, for every k of a small array and a
 * spread of k for a large one. */
static void order_stat_case(const char *name, const double *values, uint32_t n)
{
    double *ref = malloc(n * sizeof *ref), *a = malloc(n * sizeof *a);
    if (!ref || !a) {
        free(ref);
        free(a);
        return;
    }
    memcpy(ref, values, n * sizeof *ref);
    qsort(ref, n, sizeof *ref, cmp_double);
    int bad = 0;
    uint32_t step = n > 200 ? n / 97 : 1;
    for (uint32_t k = 0; k < n; k += step) {
        memcpy(a, values, n * sizeof *a);
        double sorted = ld_var_order_stat(a, n, k, LD_VAR_SORT);
        for (uint32_t i = 0; i < n; i++)
            bad += a[i] != ref[i];
        memcpy(a, values, n * sizeof *a);
        double selected = ld_var_order_stat(a, n, k, LD_VAR_SELECT);
        for (uint32_t i = 0; i < n; i++)
            bad += i < k ? a[i] > selected : i > k ? a[i] < selected : 0;
        bad += sorted != ref[k] || selected != ref[k];
    }
    CHECK(bad == 0, "order statistics of %s: %d mismatches", name, bad);
    free(ref);
    free(a);
}

static void test_order_stat(void)
{
    enum { N = 5000 };
    static double v[N];
    ld_pcg32 rng;
    ld_pcg32_seed(&rng, 5, 6);
    for (int i = 0; i < N; i++)
        v[i] = (double)ld_pcg32_bounded(&rng, 10) - 4.5; /* ten values, many ties */
    order_stat_case("ties", v, N);
    for (int i = 0; i < N; i++)
        v[i] = i * 0.25 - 100;
    order_stat_case("sorted", v, N);
    for (int i = 0; i < N; i++)
        v[i] = -i * 0.25;
    order_stat_case("reversed", v, N);
    for (int i = 0; i < N; i++)
        v[i] = 1.5;
    order_stat_case("all equal", v, N);
    for (int i = 0; i < N; i++)
        v[i] = 1.0 + ld_pcg32_bounded(&rng, 1000) * 0x1p-52; /* within 1000 ulps */
    v[17] = 1e9;                                             /* and one far away */
    order_stat_case("clustered", v, N);
    for (int i = 0; i < N; i++)
        v[i] = (ld_pcg32_double(&rng) - 0.5) * 1e308; /* hi - lo overflows */
    order_stat_case("too wide", v, N);
    for (int i = 0; i < N; i++)
        v[i] = ld_pcg32_normal(&rng) * 1e-310; /* subnormals */
    order_stat_case("subnormal", v, N);
    for (uint32_t n = 1; n <= 9; n++) {
        for (uint32_t i = 0; i < n; i++)
            v[i] = ld_pcg32_normal(&rng);
        order_stat_case("tiny", v, n);
    }
    double one = 3;
    CHECK(isnan(ld_var_order_stat(&one, 1, 1, LD_VAR_SORT)), "k = n accepted");
}

/* A book of n + 1 trades extends the book of n, and any slice of it is the same slice
 * made on its own: every trade depends on (seed, id) alone. */
static void test_book(void)
{
    enum { N = 10000 };
    static ld_trade big[N + 1], small[N], slice[100];
    ld_book_make(big, N + 1, 0, SEED);
    ld_book_make(small, N, 0, SEED);
    ld_book_make(slice, 100, 5000, SEED);
    CHECK(memcmp(big, small, sizeof small) == 0,
          "the book of N is not a prefix of N + 1");
    CHECK(memcmp(big + 5000, slice, sizeof slice) == 0, "a slice differs from the book");
    int bad = 0, sells = 0, same_as_other_seed = 0;
    ld_trade other[1];
    for (int i = 0; i < N; i++) {
        const ld_trade *t = &big[i];
        bad += t->id != (uint64_t)i || t->side > LD_SELL;
        bad += t->price_cents < 1000 || t->price_cents > 50000;
        bad += t->quantity < 1 || t->quantity > 10000 || t->counterparty >= 1000;
        bad += t->symbol[0] == '\0' || t->symbol[LD_SYMBOL_LEN - 1] != '\0';
        sells += t->side == LD_SELL;
        if (i < 100) {
            ld_book_make(other, 1, (uint64_t)i, SEED + 1);
            same_as_other_seed += other->price_cents == t->price_cents;
        }
    }
    CHECK(bad == 0, "%d out-of-range fields in the book", bad);
    CHECK(fabs(sells - N / 2.0) < 5 * sqrt(N / 4.0), "%d sells of %d trades", sells, N);
    CHECK(same_as_other_seed < 5, "%d of 100 prices repeat under another seed",
          same_as_other_seed);
}

/* Streams differ by trade and by purpose from their first output. */
static void test_streams(void)
{
    int collisions = 0;
    uint32_t first[3][200];
    for (int p = 0; p < 3; p++)
        for (int id = 0; id < 200; id++) {
            ld_pcg32 rng = ld_trade_stream(SEED, (uint64_t)id, (enum ld_stream)(p + 1));
            first[p][id] = ld_pcg32_next(&rng);
        }
    for (int p = 0; p < 3; p++)
        for (int id = 1; id < 200; id++)
            collisions += first[p][id] == first[p][id - 1] ||
                          first[p][id] == first[(p + 1) % 3][id];
    CHECK(collisions == 0, "%d streams start alike", collisions);
}

int main(void)
{
    enum { TRADES = 3000 };
    ld_trade *book = malloc(TRADES * sizeof *book);
    double *scratch = malloc(SIMS * sizeof *scratch);
    if (book == NULL || scratch == NULL) {
        free(book);
        free(scratch);
        return 1;
    }
    ld_book_make(book, TRADES, 0, SEED);
    test_book();
    test_streams();
    test_accuracy(book, scratch);
    test_reference(book, scratch);
    test_kernels_agree(book, scratch);
    test_determinism(book, scratch);
    test_order_stat();
    free(book);
    free(scratch);
    if (failures != 0) {
        fprintf(stderr, "test_var: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_var: ok\n");
    return 0;
}
