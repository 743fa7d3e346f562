/* book.h: the trade book, generated deterministically from a seed.
 *
 * Money is fixed-point cents. A trade's fields depend only on (seed, id), never on how
 * many trades are made or where, so a book of N trades is a prefix of one of N+1.
 * Each trade also owns one PCG stream per purpose (see ld_trade_stream), which is how
 * a trade's latencies and VaR come out the same under every strategy and rank count.
 */
#ifndef LD_BOOK_H
#define LD_BOOK_H

#include <stddef.h>
#include <stdint.h>

#include "pcg.h"

enum ld_side { LD_BUY = 0, LD_SELL = 1 };

#define LD_SYMBOL_LEN 8 /* NUL-terminated, up to 7 characters */

typedef struct ld_trade {
    uint64_t id;
    int64_t price_cents; /* per share */
    uint32_t quantity;
    uint32_t counterparty;
    uint8_t side; /* enum ld_side */
    char symbol[LD_SYMBOL_LEN];
} ld_trade;

/* The trade's notional in cents: its price times its quantity. Computed, not kept, so a
 * trade is 40 bytes: a million of them on one rank are 40 MB. */
static inline int64_t ld_trade_notional(const ld_trade *t)
{
    return t->price_cents * (int64_t)t->quantity;
}

/* What a stream is for: each purpose gets an independent stream per trade. */
enum ld_stream {
    LD_STREAM_BOOK = 1,   /* the trade's own fields */
    LD_STREAM_SETTLE = 2, /* the five call latencies and the check outcomes */
    LD_STREAM_VAR = 3,    /* the Monte Carlo draws */
};

/* The PCG stream of one trade for one purpose. */
ld_pcg32 ld_trade_stream(uint64_t seed, uint64_t id, enum ld_stream purpose);

/* Fill out[0..n) with trades first_id .. first_id+n-1 of the book for seed. */
void ld_book_make(ld_trade *out, size_t n, uint64_t first_id, uint64_t seed);

#endif
