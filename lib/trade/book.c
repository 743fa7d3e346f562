/* book.c: the trade book and the per-trade PCG streams, pure functions of the seed. */
#include "book.h"

#include <string.h>

/* SplitMix64's finalizer (Steele, Lea and Flood 2014): a bijection on 64 bits whose
 * every output bit depends on every input bit, so nearby seeds and ids land far apart. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30u;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27u;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31u;
    return x;
}

#define LD_GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

/* The key of one purpose under one seed; each id is then its own stream under the key.
 * The stream selector is key ^ id, a bijection of the id, so no two trades of a
 * purpose share an increment (for ids below 2^63), and the initial state is hashed from
 * both, so streams do not start from related states either. */
ld_pcg32 ld_trade_stream(uint64_t seed, uint64_t id, enum ld_stream purpose)
{
    uint64_t key = mix64(seed + LD_GOLDEN_GAMMA * (uint64_t)purpose);
    ld_pcg32 rng;
    ld_pcg32_seed(&rng, mix64(key ^ mix64(id + LD_GOLDEN_GAMMA)), key ^ id);
    return rng;
}

/* Liquid US large caps; a trade picks one uniformly. */
static const char ld_tickers[][LD_SYMBOL_LEN] = {
    "AAPL", "MSFT", "AMZN", "GOOGL", "META", "NVDA", "TSLA", "JPM",  "BAC", "WFC",   "GS",
    "MS",   "C",    "V",    "MA",    "UNH",  "JNJ",  "PFE",  "MRK",  "XOM", "CVX",   "KO",
    "PEP",  "WMT",  "HD",   "DIS",   "NFLX", "INTC", "CSCO", "ORCL", "IBM", "BRK.B",
};

#define LD_TICKERS (sizeof ld_tickers / sizeof ld_tickers[0])

/* The fields are drawn in a fixed order from the trade's own book stream: side, price,
 * quantity, counterparty, symbol. */
static void book_trade(ld_trade *t, uint64_t id, uint64_t seed)
{
    ld_pcg32 rng = ld_trade_stream(seed, id, LD_STREAM_BOOK);
    /* Padding too, so that equal trades compare equal byte for byte. */
    memset(t, 0, sizeof *t);
    t->id = id;
    t->side = (uint8_t)(ld_pcg32_bounded(&rng, 2) == 0 ? LD_BUY : LD_SELL);
    t->price_cents = (int64_t)ld_pcg32_range(&rng, 1000, 50000);
    t->quantity = ld_pcg32_range(&rng, 1, 10000);
    t->counterparty = ld_pcg32_bounded(&rng, 1000);
    const char *symbol = ld_tickers[ld_pcg32_bounded(&rng, (uint32_t)LD_TICKERS)];
    memcpy(t->symbol, symbol, LD_SYMBOL_LEN);
}

void ld_book_make(ld_trade *out, size_t n, uint64_t first_id, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        book_trade(&out[i], first_id + i, seed);
}
