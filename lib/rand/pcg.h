/* pcg.h: the PCG32 random generator (O'Neill 2014), XSH-RR 64/32 with explicit streams.
 *
 * The state advances by a 64-bit LCG; each output is the high bits of the old state
 * xorshifted and rotated by its top five bits. Seeding follows pcg32_srandom_r, so
 * ld_pcg32 is bit-identical to the reference pcg32 (pcg-cpp's pcg32 and pcg-c's).
 *
 * Every trade owns one stream: the same trade draws the same numbers wherever it runs.
 */
#ifndef LD_PCG_H
#define LD_PCG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ld_pcg32 {
    uint64_t state;
    uint64_t inc; /* stream selector, always odd */
} ld_pcg32;

/* Seed with an initial state and a stream id, exactly as pcg32_srandom_r does. */
void ld_pcg32_seed(ld_pcg32 *rng, uint64_t initstate, uint64_t initseq);

#define LD_PCG32_MULT 6364136223846793005ULL

/* The XSH-RR output of one state: the state before the step that produced it. */
static inline uint32_t ld_pcg32_output(uint64_t old)
{
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/* The next 32-bit output. Inline: the VaR kernel calls it 40,000 times a trade. */
static inline uint32_t ld_pcg32_next(ld_pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * LD_PCG32_MULT + rng->inc;
    return ld_pcg32_output(old);
}

/* A uniform integer in [0, bound), unbiased by rejection (pcg32_boundedrand_r).
 * bound must be at least 1. */
uint32_t ld_pcg32_bounded(ld_pcg32 *rng, uint32_t bound);

/* A uniform integer in [lo, hi], both inclusive; lo <= hi. */
uint32_t ld_pcg32_range(ld_pcg32 *rng, uint32_t lo, uint32_t hi);

/* A uniform double in [0, 1) with 53 random bits, from two outputs. */
double ld_pcg32_double(ld_pcg32 *rng);

/* A standard normal variate: the 256-layer ziggurat, described in pcg.c. Each attempt
 * takes two outputs; 1.5% of attempts take more, and 0.7% are rejected and retried. */
double ld_pcg32_normal(ld_pcg32 *rng);

/* Fill out[0..n) with normals: the same values, in the same order, as n calls to
 * ld_pcg32_normal, but with the generator kept in registers. */
void ld_pcg32_normal_fill(ld_pcg32 *rng, double *out, size_t n);

/* The instruction sets ld_pcg32_normal_fill_wide has a copy for. */
enum ld_pcg_wide { LD_PCG_WIDE_SCALAR, LD_PCG_WIDE_AVX512 /* F and DQ */ };

/* The same values as ld_pcg32_normal_fill, eight attempts at a time: the states of
 * eight steps come from one by jumping ahead, so no lane waits for another's multiply.
 * `wide` picks the copy; the caller says which the CPU runs (a copy this build lacks,
 * as on a CPU other than x86-64, is the scalar fill). */
void ld_pcg32_normal_fill_wide(ld_pcg32 *rng, double *out, size_t n,
                               enum ld_pcg_wide wide);

#ifdef __cplusplus
}
#endif

#endif
