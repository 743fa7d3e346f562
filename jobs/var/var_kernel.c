/* var_kernel.c: one trade's Monte Carlo VaR: normals, GBM P&L, then an order statistic.
 *
 * The sort kernel is the study's algorithm: the trade's normals fill the scratch array,
 * a vector pass turns each z into its P&L, and the P&L array is sorted in full. The
 * select kernel uses that the P&L rises with z: it gathers the few draws in a narrow
 * band around the k-th z, computes their P&L alone and selects among them; when the
 * band misses, it takes the sort kernel's path with a selection in place of the sort.
 * Both return the same element of the same P&L array, bit for bit. The hot arithmetic
 * is plain IEEE double with no libm call, so the result is the same on every machine.
 */
#include "var_kernel.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* No a*b + c may become one fused multiply-add: that rounds once instead of twice and
 * would change results between machines with and without FMA. GCC contracts only in
 * its GNU modes, and the build compiles ISO C11; Clang contracts by default and takes
 * the standard pragma. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* Eight doubles, one AVX-512 register, two AVX2 registers or four SSE2 or NEON ones:
 * GCC and Clang lower these operators to whatever the target has, and each lane does
 * exactly the scalar IEEE operations, so every instruction set gives the same bits. */
typedef double var_vd __attribute__((vector_size(64)));

/* The helpers that take these vectors by value are static and always inlined into
 * each per-target copy, so no call with a vector argument crosses a target's ABI:
 * clang's note that one would is moot here. */
#pragma GCC diagnostic ignored "-Wpsabi"
typedef uint64_t var_vu __attribute__((vector_size(64)));
typedef int64_t var_vi __attribute__((vector_size(64))); /* compares give -1 or 0 */
typedef double var_v2 __attribute__((vector_size(16)));
typedef int64_t var_i2 __attribute__((vector_size(16)));

/* The helpers that pass these by value are always inlined, so no call ever passes one
 * and GCC's note that the ABI for them differs with AVX-512 does not apply. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define VAR_LANES 8u
#define VD(x) ((var_vd){(x), (x), (x), (x), (x), (x), (x), (x)})
#define V2(x) ((var_v2){(x), (x)})

/* 2^(j/32) for j = 0..31, correctly rounded from 50 digits, in hex to show the bits. */
static const double var_exp2_tab[32] = {
    0x1.0000000000000p+0, 0x1.059b0d3158574p+0, 0x1.0b5586cf9890fp+0,
    0x1.11301d0125b51p+0, 0x1.172b83c7d517bp+0, 0x1.1d4873168b9aap+0,
    0x1.2387a6e756238p+0, 0x1.29e9df51fdee1p+0, 0x1.306fe0a31b715p+0,
    0x1.371a7373aa9cbp+0, 0x1.3dea64c123422p+0, 0x1.44e086061892dp+0,
    0x1.4bfdad5362a27p+0, 0x1.5342b569d4f82p+0, 0x1.5ab07dd485429p+0,
    0x1.6247eb03a5585p+0, 0x1.6a09e667f3bcdp+0, 0x1.71f75e8ec5f74p+0,
    0x1.7a11473eb0187p+0, 0x1.82589994cce13p+0, 0x1.8ace5422aa0dbp+0,
    0x1.93737b0cdc5e5p+0, 0x1.9c49182a3f090p+0, 0x1.a5503b23e255dp+0,
    0x1.ae89f995ad3adp+0, 0x1.b7f76f2fb5e47p+0, 0x1.c199bdd85529cp+0,
    0x1.cb720dcef9069p+0, 0x1.d5818dcfba487p+0, 0x1.dfc97337b9b5fp+0,
    0x1.ea4afa2a490dap+0, 0x1.f50765b6e4540p+0,
};

/* exp(x) on both lanes, for |x| < 700 (no overflow handling: the kernel's arguments
 * stay below 0.3, since the ziggurat never returns |z| > 14). The error is at most
 * 1.02 ulp, measured against long double over [-0.7, 0.7] and [-700, 700].
 *
 * Tang's method: x = (32m + j) ln2/32 + r with |r| <= ln2/64, so exp(x) = 2^m 2^(j/32)
 * e^r. Rounding x*32/ln2 to the integer k = 32m + j by adding 1.5*2^52 leaves k in the
 * low bits of the sum. ln2/32 is split in two, the high part with 20 trailing zero
 * bits so that k*hi is exact. e^r - 1 is its Taylor series to r^6: the next term is
 * below 4e-18. The scale 2^m goes straight into the exponent bits of the table entry. */
static inline __attribute__((always_inline)) var_vd var_exp(var_vd x)
{
    const var_vd shift = VD(0x1.8p52);
    var_vd t = x * VD(0x1.71547652b82fep+5) + shift;
    var_vd k = t - shift;
    var_vd r = (x - k * VD(0x1.62e42fee00000p-6)) - k * VD(0x1.a39ef35793c76p-38);
    var_vu bits;
    memcpy(&bits, &t, sizeof bits);
    var_vu j = bits & 31u;
    var_vd tab = VD(0.0);
    for (unsigned l = 0; l < VAR_LANES; l++)
        tab[l] = var_exp2_tab[j[l]];
    var_vu scaled;
    memcpy(&scaled, &tab, sizeof scaled);
    scaled += (bits >> 5u) << 52u;
    var_vd s;
    memcpy(&s, &scaled, sizeof s);
    var_vd r2 = r * r;
    var_vd em1 =
        r + r2 * ((VD(1.0 / 2) + r * VD(1.0 / 6)) +
                  r2 * ((VD(1.0 / 24) + r * VD(1.0 / 120)) + r2 * VD(1.0 / 720)));
    return s + s * em1;
}

/* The study's P&L of eight draws, operation for operation:
 * sim = price*exp((mu - sigma^2/2) + sigma*z), pnl = notional*((sim - price)/price). */
static inline __attribute__((always_inline)) var_vd var_pnl8(var_vd z, double price,
                                                             double notional)
{
    const double drift = LD_VAR_DRIFT - 0.5 * LD_VAR_VOL * LD_VAR_VOL;
    var_vd sim = VD(price) * var_exp(VD(drift) + VD(LD_VAR_VOL) * z);
    return VD(notional) * ((sim - VD(price)) / VD(price));
}

/* Turn every z of a[0..n) into its P&L in place. The last few elements go through the
 * same vector code, padded, so a value does not depend on where it sits. */
static inline __attribute__((always_inline)) void
var_pnl_body(double *a, uint32_t n, double price, double notional)
{
    uint32_t i = 0;
    for (; i + VAR_LANES <= n; i += VAR_LANES) {
        var_vd v;
        memcpy(&v, a + i, sizeof v);
        v = var_pnl8(v, price, notional);
        memcpy(a + i, &v, sizeof v);
    }
    if (i < n) {
        var_vd v = VD(a[i]);
        memcpy(&v, a + i, (n - i) * sizeof a[0]);
        v = var_pnl8(v, price, notional);
        memcpy(a + i, &v, (n - i) * sizeof a[0]);
    }
}

/* Sift a[root] down the max-heap a[0..n). */
static void var_sift(double *a, uint32_t root, uint32_t n)
{
    double v = a[root];
    for (uint32_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (!(a[child] > v))
            break;
        a[root] = a[child];
    }
    a[root] = v;
}

/* Heapsort: in place and O(n log n) whatever the input. The sort falls back on it when
 * its keys fail to spread the values, so no input makes it quadratic. */
static void var_heapsort(double *a, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        var_sift(a, i, n);
    for (uint32_t end = n; end-- > 1;) {
        double top = a[0];
        a[0] = a[end];
        a[end] = top;
        var_sift(a, 0, end);
    }
}

/* Lane by lane, the lesser and greater of a and b: one compare and two selects, which
 * every instruction set has. The values hold no NaN. */
static inline __attribute__((always_inline)) var_vd var_vmin(var_vd a, var_vd b)
{
    var_vi lt = a < b;
    return (var_vd)((lt & (var_vi)a) | (~lt & (var_vi)b));
}

static inline __attribute__((always_inline)) var_vd var_vmax(var_vd a, var_vd b)
{
    var_vi gt = a > b;
    return (var_vd)((gt & (var_vi)a) | (~gt & (var_vi)b));
}

/* Smallest and largest of a[0..n), n >= 1, eight lanes at a time; the tail is padded
 * with a[0], which changes neither. */
static inline __attribute__((always_inline)) void
var_minmax_body(const double *a, uint32_t n, double *lo, double *hi)
{
    var_vd l = VD(a[0]), h = VD(a[0]);
    uint32_t i = 0;
    for (; i + VAR_LANES <= n; i += VAR_LANES) {
        var_vd v;
        memcpy(&v, a + i, sizeof v);
        l = var_vmin(l, v);
        h = var_vmax(h, v);
    }
    var_vd v = VD(a[0]);
    memcpy(&v, a + i, (n - i) * sizeof a[0]);
    l = var_vmin(l, v);
    h = var_vmax(h, v);
    *lo = l[0];
    *hi = h[0];
    for (unsigned k = 1; k < VAR_LANES; k++) {
        *lo = l[k] < *lo ? l[k] : *lo;
        *hi = h[k] > *hi ? h[k] : *hi;
    }
}

/* The sort orders values by a 22-bit key, their place between the minimum and the
 * maximum, in two counting passes of 11 bits each: 2^11 counters fit in L1. Three
 * passes of 8 bits (256 open runs, 16 KiB of lines, in any L1) and keys computed once
 * and carried along were both slower here: the added pass and the key traffic cost
 * more than the L2 stores they save. */
#define LD_VAR_DIGIT_BITS 11u
#define LD_VAR_DIGITS (1u << LD_VAR_DIGIT_BITS)
#define LD_VAR_DIGIT_MASK (LD_VAR_DIGITS - 1u)

/* The key of x: (x - lo)*scale rounds monotonically, so x <= y gives key(x) <= key(y).
 * With scale = (2^22 - 1)/(hi - lo) every key of a value in [lo, hi] is below 2^22. */
static inline uint32_t var_key(double x, double lo, double scale)
{
    return (uint32_t)((x - lo) * scale);
}

/* The keys of a[0..n) into key[], eight at a time: lane by lane the same subtraction,
 * multiplication and truncation as var_key, so the same keys on every path. */
static inline __attribute__((always_inline)) void
var_keys_body(const double *a, uint32_t n, double lo, double scale, uint32_t *key)
{
    typedef uint32_t var_vk __attribute__((vector_size(32)));
    uint32_t i = 0;
    for (; i + VAR_LANES <= n; i += VAR_LANES) {
        var_vd x;
        memcpy(&x, a + i, sizeof x);
        var_vk k = __builtin_convertvector((x - VD(lo)) * VD(scale), var_vk);
        memcpy(key + i, &k, sizeof k);
    }
    for (; i < n; i++)
        key[i] = var_key(a[i], lo, scale);
}

/* The kernel's vector loops, one copy per instruction set. */
typedef struct var_simd {
    // cppcheck-suppress unusedStructMember
    void (*pnl)(double *a, uint32_t n, double price, double notional);
    // cppcheck-suppress unusedStructMember
    void (*minmax)(const double *a, uint32_t n, double *lo, double *hi);
    // cppcheck-suppress unusedStructMember
    void (*keys)(const double *a, uint32_t n, double lo, double scale, uint32_t *key);
} var_simd;

/* target is an attribute, which no parentheses may enclose. */
// NOLINTBEGIN(bugprone-macro-parentheses)
#define VAR_SIMD_COPY(suffix, target)                                                    \
    target static void var_pnl_##suffix(double *a, uint32_t n, double price,             \
                                        double notional)                                 \
    {                                                                                    \
        var_pnl_body(a, n, price, notional);                                             \
    }                                                                                    \
    target static void var_minmax_##suffix(const double *a, uint32_t n, double *lo,      \
                                           double *hi)                                   \
    {                                                                                    \
        var_minmax_body(a, n, lo, hi);                                                   \
    }                                                                                    \
    target static void var_keys_##suffix(const double *a, uint32_t n, double lo,         \
                                         double scale, uint32_t *key)                    \
    {                                                                                    \
        var_keys_body(a, n, lo, scale, key);                                             \
    }
// NOLINTEND(bugprone-macro-parentheses)

VAR_SIMD_COPY(generic, )
#define VAR_SIMD_ENTRY(suffix)                                                           \
    {                                                                                    \
        var_pnl_##suffix, var_minmax_##suffix, var_keys_##suffix                         \
    }

/* Wider copies where the compiler can target them and the CPU has them, chosen at run
 * time; none may use FMA (see FP_CONTRACT above), and none does: the targets below do
 * not include it. */
#if defined(__x86_64__) && defined(__GNUC__)
#define VAR_HAVE_X86 1
VAR_SIMD_COPY(avx2, __attribute__((target("avx2"))))
VAR_SIMD_COPY(avx512, __attribute__((target("avx512f,avx512dq"))))
#endif

static const var_simd var_simds[LD_VAR_PATHS] = {
    VAR_SIMD_ENTRY(generic),
#ifdef VAR_HAVE_X86
    VAR_SIMD_ENTRY(avx2),
    VAR_SIMD_ENTRY(avx512),
#endif
};

static const char *const var_path_names[LD_VAR_PATHS] = {"generic", "avx2", "avx512"};

/* Whether this CPU and build can run path p. */
static int var_path_runs(enum ld_var_path p)
{
#ifdef VAR_HAVE_X86
    __builtin_cpu_init();
    if (p == LD_VAR_PATH_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    if (p == LD_VAR_PATH_AVX2)
        return __builtin_cpu_supports("avx2");
#endif
    return p == LD_VAR_PATH_GENERIC;
}

/* The widest path the CPU runs, or the one LD_VAR_PATH names (for tests that compare
 * the paths; one the CPU cannot run falls back to the widest it can). Chosen once. */
static enum ld_var_path var_path_choose(void)
{
    const char *want = getenv("LD_VAR_PATH");
    for (int p = 0; want && p < LD_VAR_PATHS; p++)
        if (strcmp(want, var_path_names[p]) == 0 && var_path_runs((enum ld_var_path)p))
            return (enum ld_var_path)p;
    for (int p = LD_VAR_PATHS - 1; p > 0; p--)
        if (var_path_runs((enum ld_var_path)p))
            return (enum ld_var_path)p;
    return LD_VAR_PATH_GENERIC;
}

enum ld_var_path ld_var_path(void)
{
    static _Atomic int chosen = -1; /* any thread may choose: they all choose alike */
    int p = chosen;
    if (p < 0)
        chosen = p = (int)var_path_choose();
    return (enum ld_var_path)p;
}

static const var_simd *var_simd_now(void)
{
    return &var_simds[ld_var_path()];
}

static void var_pnl(double *a, uint32_t n, double price, double notional)
{
    var_simd_now()->pnl(a, n, price, notional);
}

/* Insertion sort with a budget of moves: 0 when a[0..n) is sorted, -1 when the budget
 * ran out first, leaving a permutation of what a held. */
static int var_insertion(double *a, uint32_t n, int64_t budget)
{
    for (uint32_t i = 1; i < n; i++) {
        double v = a[i];
        uint32_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
        budget -= (int64_t)(i - j);
        if (budget < 0)
            return -1;
    }
    return 0;
}

/* One counting pass: move src into dst ordered by one digit of its keys, keeping the
 * order of equal digits. start[] holds where each digit's run begins. */
static void var_scatter(const double *src, const uint32_t *key, double *dst, uint32_t n,
                        unsigned shift, uint32_t *start)
{
    for (uint32_t i = 0; i < n; i++)
        dst[start[(key[i] >> shift) & LD_VAR_DIGIT_MASK]++] = src[i];
}

/* Turn digit counts into the start of each digit's run. */
static void var_prefix(uint32_t *count)
{
    uint32_t sum = 0;
    for (uint32_t d = 0; d < LD_VAR_DIGITS; d++) {
        uint32_t c = count[d];
        count[d] = sum;
        sum += c;
    }
}

/* The sort's working memory, one allocation: on the heap, as a green thread's stack is
 * too small for it. */
typedef struct var_sort_space {
    uint32_t low[LD_VAR_DIGITS];  /* counts, then run starts, of the low digit */
    uint32_t high[LD_VAR_DIGITS]; /* and of the high digit */
    uint32_t *key;                /* a's keys, then those of a block of aux */
    double aux[];                 /* the array between the passes; the keys follow it */
} var_sort_space;

/* The second pass takes aux's keys a block at a time, into the same array: a block's
 * keys stay in L1 between the vector loop that makes them and the scatter that reads
 * them, and carrying keys through the first scatter would double its random stores. */
#define LD_VAR_KEY_BLOCK 512u

/* Sort a[0..n) ascending, exactly, by value. An LSD radix sort on the 22-bit key puts
 * every value within its key's run; the key is monotone in the value, so an insertion
 * pass then only reorders values of equal key, which for a smooth distribution like
 * the P&L are rare: 20,000 values over 4 million keys. The passes are linear and
 * branch-free but the last, whose branches are nearly always predicted: several times
 * faster than a comparison sort. The keys are computed by a vector loop, not inside
 * the scalar passes: on an AVX-512 Xeon their conversions there had cost the sort a
 * sixth of its time. A degenerate spread of values exhausts the insertion budget and
 * ends in heapsort. No NaN may be present. 0 or -ENOMEM. */
static int var_sort(double *a, uint32_t n)
{
    const var_simd *simd = var_simd_now();
    double lo, hi;
    if (n < 2)
        return 0;
    simd->minmax(a, n, &lo, &hi);
    if (!(lo < hi))
        return 0; /* all equal */
    double scale = (double)(LD_VAR_DIGITS * LD_VAR_DIGITS - 1u) / (hi - lo);
    if (!isfinite(hi - lo) || !isfinite(scale)) {
        var_heapsort(a, n); /* a spread too wide or too narrow to scale */
        return 0;
    }
    var_sort_space *sp =
        malloc(sizeof *sp + (size_t)n * (sizeof sp->aux[0] + sizeof *sp->key));
    if (sp == NULL)
        return -ENOMEM;
    void *keys = sp->aux + n; /* 8-byte aligned, as the doubles before them end */
    sp->key = keys;
    memset(sp->low, 0, sizeof sp->low);
    memset(sp->high, 0, sizeof sp->high);
    simd->keys(a, n, lo, scale, sp->key);
    for (uint32_t i = 0; i < n; i++) {
        sp->low[sp->key[i] & LD_VAR_DIGIT_MASK]++;
        sp->high[(sp->key[i] >> LD_VAR_DIGIT_BITS) & LD_VAR_DIGIT_MASK]++;
    }
    var_prefix(sp->low);
    var_prefix(sp->high);
    var_scatter(a, sp->key, sp->aux, n, 0, sp->low);
    for (uint32_t b = 0; b < n; b += LD_VAR_KEY_BLOCK) {
        uint32_t m = n - b < LD_VAR_KEY_BLOCK ? n - b : LD_VAR_KEY_BLOCK;
        simd->keys(sp->aux + b, m, lo, scale, sp->key);
        var_scatter(sp->aux + b, sp->key, a, m, LD_VAR_DIGIT_BITS, sp->high);
    }
    free(sp);
    if (var_insertion(a, n, 8 * (int64_t)n) != 0)
        var_heapsort(a, n);
    return 0;
}

static inline void var_swap(double *a, ptrdiff_t i, ptrdiff_t j)
{
    double t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* Floyd and Rivest's SELECT (CACM 1975, algorithm 489): put the k-th smallest of
 * a[left..right] at a[k], smaller ones before it and larger ones after. A recursive
 * call on a sample of about n^(2/3) elements brings the pivot close to the k-th, so
 * one partition of the whole range nearly settles it: about n + k comparisons, against
 * 2n to 3n for quickselect. Signed indices, as the partition steps past the ends. */
static void var_select(double *a, ptrdiff_t left, ptrdiff_t right, ptrdiff_t k)
{
    while (right > left) {
        if (right - left > 600) {
            double n = (double)(right - left + 1), i = (double)(k - left + 1);
            double z = log(n), s = 0.5 * exp(2.0 * z / 3.0);
            double sd = 0.5 * sqrt(z * s * (n - s) / n) * (i < n / 2 ? -1.0 : 1.0);
            double sub_left = fmax((double)left, floor((double)k - i * s / n + sd));
            double sub_right =
                fmin((double)right, floor((double)k + (n - i) * s / n + sd));
            var_select(a, (ptrdiff_t)sub_left, (ptrdiff_t)sub_right, k);
        }
        double t = a[k];
        ptrdiff_t i = left, j = right;
        var_swap(a, left, k);
        if (a[right] > t)
            var_swap(a, right, left);
        while (i < j) {
            var_swap(a, i, j);
            i++;
            j--;
            while (a[i] < t)
                i++;
            while (a[j] > t)
                j--;
        }
        if (a[left] == t) {
            var_swap(a, left, j);
        } else {
            j++;
            var_swap(a, j, right);
        }
        if (j <= k)
            left = j + 1;
        if (k <= j)
            right = j - 1;
    }
}

double ld_var_order_stat(double *pnl, uint32_t n, uint32_t k, enum ld_var_kernel kernel)
{
    if (pnl == NULL || k >= n)
        return NAN;
    switch (kernel) {
    case LD_VAR_SORT:
        return var_sort(pnl, n) == 0 ? pnl[k] : NAN;
    case LD_VAR_SELECT:
        var_select(pnl, 0, (ptrdiff_t)n - 1, (ptrdiff_t)k);
        return pnl[k];
    }
    return NAN;
}

/* The select kernel finds the k-th P&L from the draws z themselves, as the P&L rises
 * with z; it computes the P&L only of the draws in a narrow band around the k-th z.
 * That is exact only where the computed P&L is monotone too, which rounding spoils
 * for draws within an ulp or so of each other. So the band is kept only when no draw
 * lies within LD_VAR_GAP of either of its edges: the computed P&L is within 1e-15 of
 * the notional from the exact one (exp within 1.02 ulp, the other steps half an ulp,
 * sim - price exact), while over a step of 1e-9 in z the exact one moves by at least
 * sigma*exp(-0.3)*1e-9 > 1e-11 of it. Every draw below the band then has a smaller
 * P&L than every draw in it, and every draw above a larger one. */
#define LD_VAR_GAP 1e-9
#define LD_VAR_GAP_HOLDS (LD_VAR_VOL * LD_VAR_GAP > 1e-13) /* false for a tiny sigma */

/* The draws are standard normal, so the k-th of n lies near Phi^-1(p), p = (k + 1/2)/n,
 * with a standard deviation of sqrt(p(1 - p)/n)/phi(Phi^-1(p)): 0.015 for 20,000
 * draws. The band spans three of them either side; the k-th falls outside it for
 * about one trade in 370, which then takes the full path. Shorter runs always do. At
 * the 95% confidence p stays within 1/n of 0.05, so a first-order step from z_0.05
 * places the centre. */
#define LD_VAR_Z05 (-1.6448536269514722)   /* Phi^-1(0.05), for the 95% confidence */
#define LD_VAR_PHI_Z05 0.10313564037537139 /* the normal density there */
#define LD_VAR_BAND_SD 3.0
#define LD_VAR_BAND_MIN 2048u

/* The band [lo, hi] expected to hold the k-th of n standard normal draws. */
static void var_band_edges(uint32_t n, uint32_t k, double *lo, double *hi)
{
    double p = ((double)k + 0.5) / n;
    double centre = LD_VAR_Z05 + (p - 0.05) / LD_VAR_PHI_Z05;
    double half = LD_VAR_BAND_SD * sqrt(p * (1.0 - p) / n) / LD_VAR_PHI_Z05;
    *lo = centre - half;
    *hi = centre + half;
}

/* Move the band's draws among z[i..i+8) to z[w...), without branches; w <= i. */
static uint32_t var_band_move8(double *z, uint32_t i, uint32_t w, double lo, double hi)
{
    for (uint32_t j = i; j < i + 8; j++) {
        double x = z[j];
        z[w] = x;
        w += (x >= lo) & (x <= hi);
    }
    return w;
}

/* The lanes of x at most hi and not below the band, whose test is already done. */
static inline var_i2 var_band_in(var_v2 x, var_i2 is_low, var_v2 hi)
{
    return ~is_low & (x <= hi);
}

/* Move the draws in [lo, hi] to the front of z and count those below lo. Eight at a
 * time: vector compares count them and tell whether any is in the band, which for a
 * band of 1% happens for one block in twelve; only then are they moved. A scalar
 * compare per draw would cost more: the CPU retires few of those a cycle. The rest of
 * z is lost. Returns the number moved. */
static uint32_t var_band_gather(double *z, uint32_t n, double lo, double hi,
                                uint32_t *below)
{
    const var_v2 vlo = V2(lo), vhi = V2(hi);
    var_i2 under = {0, 0};
    uint32_t w = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        var_v2 a, b, c, d;
        memcpy(&a, z + i, sizeof a);
        memcpy(&b, z + i + 2, sizeof b);
        memcpy(&c, z + i + 4, sizeof c);
        memcpy(&d, z + i + 6, sizeof d);
        var_i2 la = a < vlo, lb = b < vlo, lc = c < vlo, ld = d < vlo;
        under += (la + lb) + (lc + ld);
        var_i2 in = (var_band_in(a, la, vhi) | var_band_in(b, lb, vhi)) |
                    (var_band_in(c, lc, vhi) | var_band_in(d, ld, vhi));
        if ((in[0] | in[1]) != 0)
            w = var_band_move8(z, i, w, lo, hi);
    }
    uint32_t low = (uint32_t)(-(under[0] + under[1]));
    for (; i < n; i++) {
        double x = z[i];
        low += x < lo;
        z[w] = x;
        w += (x >= lo) & (x <= hi);
    }
    *below = low;
    return w;
}

/* Whether a gathered draw falls in the gap outside either edge of the band. */
static int var_band_crowded(const double *z, uint32_t w, double lo, double hi)
{
    uint32_t near = 0;
    for (uint32_t i = 0; i < w; i++)
        near += (z[i] < lo) | (z[i] > hi);
    return near != 0;
}

/* The k-th smallest P&L through the band, into *pnl_k: 0, or -1 when the band missed
 * the k-th draw or had a draw at its edge, leaving z spoilt. Draws within the gap
 * outside the band are gathered too, so that they can be seen. */
static int var_select_band(double *z, uint32_t n, uint32_t k, double price,
                           double notional, double *pnl_k)
{
    double lo, hi;
    uint32_t below;
    var_band_edges(n, k, &lo, &hi);
    uint32_t w = var_band_gather(z, n, lo - LD_VAR_GAP, hi + LD_VAR_GAP, &below);
    if (below > k || k - below >= w || var_band_crowded(z, w, lo, hi))
        return -1;
    var_pnl(z, w, price, notional);
    var_select(z, 0, (ptrdiff_t)w - 1, (ptrdiff_t)(k - below));
    *pnl_k = z[k - below];
    return 0;
}

/* k = (1 - 0.95)*sims truncated, as the study computes it: 1000 of 20,000. */
static uint32_t var_index(uint32_t sims)
{
    return (uint32_t)((1.0 - LD_VAR_CONFIDENCE) * (double)sims);
}

/* The draws of trade t, into z[0..sims), by the normal fill of the kernel's path: the
 * wide one on AVX-512 (pcg.c says why not on AVX2). */
static void var_draws(const ld_trade *t, uint64_t seed, uint32_t sims, double *z)
{
    static const enum ld_pcg_wide wide[LD_VAR_PATHS] = {
        [LD_VAR_PATH_GENERIC] = LD_PCG_WIDE_SCALAR,
        [LD_VAR_PATH_AVX2] = LD_PCG_WIDE_SCALAR,
        [LD_VAR_PATH_AVX512] = LD_PCG_WIDE_AVX512,
    };
    ld_pcg32 rng = ld_trade_stream(seed, t->id, LD_STREAM_VAR);
    ld_pcg32_normal_fill_wide(&rng, z, sims, wide[ld_var_path()]);
}

double ld_var_trade(const ld_trade *t, uint64_t seed, uint32_t sims,
                    enum ld_var_kernel kernel, double *scratch)
{
    if (t == NULL || scratch == NULL || sims == 0)
        return NAN;
    if (kernel != LD_VAR_SORT && kernel != LD_VAR_SELECT)
        return NAN;
    double price = (double)t->price_cents / 100.0;
    double notional = (double)ld_trade_notional(t) / 100.0;
    uint32_t k = var_index(sims);
    var_draws(t, seed, sims, scratch);
    if (kernel == LD_VAR_SELECT && LD_VAR_GAP_HOLDS && sims >= LD_VAR_BAND_MIN &&
        price > 0 && notional > 0) {
        double pnl_k;
        if (var_select_band(scratch, sims, k, price, notional, &pnl_k) == 0)
            return -pnl_k;
        var_draws(t, seed, sims, scratch); /* the band missed: draw again, in full */
    }
    var_pnl(scratch, sims, price, notional);
    return -ld_var_order_stat(scratch, sims, k, kernel);
}

/* The P&L is notional*(exp(X) - 1) with X ~ N(mu - sigma^2/2, sigma^2), increasing in
 * X, so its 5% quantile is at X's: mu - sigma^2/2 + sigma*z_0.05. */
double ld_var_closed_form(const ld_trade *t)
{
    double notional = (double)ld_trade_notional(t) / 100.0;
    double x = (LD_VAR_DRIFT - 0.5 * LD_VAR_VOL * LD_VAR_VOL) + LD_VAR_VOL * LD_VAR_Z05;
    return -notional * (exp(x) - 1.0);
}

void ld_var_pnl(double *z, uint32_t n, const ld_trade *t)
{
    var_pnl(z, n, (double)t->price_cents / 100.0, (double)ld_trade_notional(t) / 100.0);
}

uint32_t ld_var_index(uint32_t sims)
{
    return var_index(sims);
}
