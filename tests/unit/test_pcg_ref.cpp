// test_pcg_ref.cpp: ld_pcg32 against the reference, pcg-cpp's pcg32, bit for bit.
//
// pcg-cpp's pcg32(initstate, initseq) seeds as pcg-c's pcg32_srandom_r does, so the two
// must give the same outputs for every seed and stream, and ld_pcg32_bounded must give
// what rng(bound) gives, including the outputs rejected along the way.
#include <pcg_random.hpp>

#include <cinttypes>
#include <cstdio>

#include "pcg.h"

namespace
{

int failures = 0;

void fail(const char *what, uint64_t seed, uint64_t stream, long step, uint64_t want,
          uint64_t got)
{
    if (++failures <= 10)
        std::fprintf(stderr,
                     "FAIL %s: seed %" PRIu64 " stream %" PRIu64
                     " step %ld: want %" PRIu64 " got %" PRIu64 "\n",
                     what, seed, stream, step, want, got);
}

// SplitMix64, to spread the test's seeds and streams over all 64 bits.
uint64_t splitmix(uint64_t &x)
{
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// pcg-c's published demo output for pcg32_srandom_r(&rng, 42, 54).
void known_answers()
{
    const uint32_t want[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                             0x83d2f293, 0xbfa4784b, 0xcbed606e};
    ld_pcg32 rng;
    ld_pcg32_seed(&rng, 42, 54);
    for (long i = 0; i < 6; i++) {
        uint32_t got = ld_pcg32_next(&rng);
        if (got != want[i])
            fail("known answer", 42, 54, i, want[i], got);
    }
}

// 1000 (seed, stream) pairs, 1000 outputs each, small and large values alike.
void raw_outputs()
{
    uint64_t mix = 1;
    for (int pair = 0; pair < 1000; pair++) {
        uint64_t seed = pair < 10 ? (uint64_t)pair : splitmix(mix);
        uint64_t stream = pair < 10 ? (uint64_t)(9 - pair) : splitmix(mix);
        pcg32 ref(seed, stream);
        ld_pcg32 rng;
        ld_pcg32_seed(&rng, seed, stream);
        for (long i = 0; i < 1000; i++) {
            uint32_t want = ref(), got = ld_pcg32_next(&rng);
            if (want != got) {
                fail("output", seed, stream, i, want, got);
                break;
            }
        }
    }
}

// rng(bound) for edge bounds (1, powers of two and their neighbours, 2^32 - 1, where
// almost half the outputs are rejected) and random ones; the streams must stay in step.
void bounded()
{
    const uint32_t edges[] = {1,           2,           3,           7,
                              10,          1000,        65535,       65536,
                              65537,       0x7fffffffu, 0x80000000u, 0x80000001u,
                              0xc0000000u, 0xfffffffeu, 0xffffffffu};
    uint64_t mix = 2;
    for (int pair = 0; pair < 200; pair++) {
        uint64_t seed = splitmix(mix), stream = splitmix(mix);
        pcg32 ref(seed, stream);
        ld_pcg32 rng;
        ld_pcg32_seed(&rng, seed, stream);
        for (long i = 0; i < 2000; i++) {
            uint32_t bound = i < 15 * 20 ? edges[i % 15] : (uint32_t)splitmix(mix) | 1u;
            uint32_t want = ref(bound), got = ld_pcg32_bounded(&rng, bound);
            if (want != got) {
                fail("bounded", seed, stream, i, want, got);
                break;
            }
        }
        if (ref() != ld_pcg32_next(&rng))
            fail("bounded: streams out of step", seed, stream, 2000, 0, 0);
    }
}

// ld_pcg32_range(lo, hi) is lo + rng(hi - lo + 1), and the full range is a raw output.
void range()
{
    pcg32 ref(7, 11);
    ld_pcg32 rng;
    ld_pcg32_seed(&rng, 7, 11);
    for (long i = 0; i < 10000; i++) {
        uint32_t lo = (uint32_t)(i * 7919 % 50000), hi = lo + (uint32_t)(i % 10007);
        uint32_t want = lo + ref(hi - lo + 1), got = ld_pcg32_range(&rng, lo, hi);
        if (want != got)
            fail("range", 7, 11, i, want, got);
    }
    uint32_t want = ref(), got = ld_pcg32_range(&rng, 0, 0xffffffffu);
    if (want != got)
        fail("range: full", 7, 11, 10000, want, got);
}

} // namespace

int main()
{
    known_answers();
    raw_outputs();
    bounded();
    range();
    if (failures != 0) {
        std::fprintf(stderr, "test_pcg_ref: %d failure(s)\n", failures);
        return 1;
    }
    std::printf("test_pcg_ref: ok (6 known answers, 10^6 outputs over 1000 seed/stream "
                "pairs, 4 * 10^5 bounded draws)\n");
    return 0;
}
