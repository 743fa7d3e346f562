/* fuzz_http_response.c: arbitrary bytes into the clients' response parser
 * (ld_http_response_feed and ld_http_response_end, lib/http/include/http.h), the path
 * every byte a server sends back goes through. The first byte of an input picks how
 * it is split and the body bound; the rest is what the server sends, then its end.
 *
 * What must hold for every input, or the harness aborts:
 * - read whole, and read in pieces of 1 to 16 bytes, the input gives the same
 *   responses and the same refusal, or none in both: a response does not depend on
 *   how the network cut it up;
 * - a feed returns 1 having used at least one byte, 0 having used all it was given,
 *   or one of the errors the header documents; after an error every call fails with
 *   it; the connection's end gives 1, 0 or -EPROTO;
 * - every response has a status of three digits, keep_alive 0 or 1, and a body within
 *   the bound, NUL-terminated.
 * ASan sees every read of a body, and that nothing leaks.
 *
 * Built with clang as a libFuzzer target; the replay driver (replay.c) runs the same
 * function over the checked-in corpus in any build.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define TRANSCRIPT_MAX 65536

/* Abort with the broken property: libFuzzer then saves the input that broke it. */
static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_http_response: %s\n", what);
        abort();
    }
}

typedef struct transcript {
    char text[TRANSCRIPT_MAX];
    size_t len;
    int error; /* the refusal, or 0 */
    int responses;
} transcript;

static void note(transcript *t, const void *s, size_t n)
{
    size_t room = sizeof t->text - t->len;
    size_t take = n < room ? n : room;

    memcpy(t->text + t->len, s, take);
    t->len += take;
}

/* Check one response against the bounds and add all of it to the transcript. */
static void check_response(transcript *t, const ld_http_response *res, size_t body_max)
{
    require(res->status >= 100 && res->status <= 999, "a status not of three digits");
    require(res->keep_alive == 0 || res->keep_alive == 1, "keep_alive neither 0 nor 1");
    require(res->body_len <= body_max, "a body past the bound");
    require(res->body != NULL && res->body[res->body_len] == '\0',
            "a body not NUL-terminated");
    note(t, &res->status, sizeof res->status);
    note(t, &res->keep_alive, sizeof res->keep_alive);
    note(t, &res->body_len, sizeof res->body_len);
    note(t, res->body, res->body_len);
    t->responses++;
}

static void check_error(int rc)
{
    require(rc == -EPROTO || rc == -EMSGSIZE || rc == -ENOMEM, "an error not documented");
}

/* Feed data[0..len) in pieces of at most step bytes, as a connection would, then end
 * the connection. */
static void read_all(transcript *t, const uint8_t *data, size_t len, size_t step,
                     size_t body_max)
{
    ld_http_response_parser *p;
    ld_http_response res;
    size_t at = 0, used;

    memset(t, 0, sizeof *t);
    require(ld_http_response_parser_open(&p, body_max) == 0, "no memory for a parser");
    while (at < len && !t->error) {
        size_t piece = len - at < step ? len - at : step, done = 0;
        while (done < piece && !t->error) {
            int rc = ld_http_response_feed(p, (const char *)data + at + done,
                                           piece - done, &used, &res);
            require(used <= piece - done, "a feed that used more than it was given");
            if (rc == 1) {
                require(used > 0, "a response from no bytes");
                check_response(t, &res, body_max);
            } else if (rc == 0) {
                require(used == piece - done, "a feed that stopped short with no answer");
            } else {
                check_error(rc);
                t->error = rc;
            }
            done += used;
        }
        at += piece;
    }
    if (!t->error) {
        int rc = ld_http_response_end(p, &res);
        if (rc == 1)
            check_response(t, &res, body_max);
        else if (rc < 0)
            require(rc == -EPROTO, "the connection's end refused with another error");
        t->error = rc < 0 ? rc : 0;
    }
    if (t->error) {
        require(ld_http_response_feed(p, "H", 1, &used, &res) == t->error && used == 0,
                "a feed after an error that did not fail with it");
        require(ld_http_response_end(p, &res) == t->error,
                "an end after an error that did not fail with it");
    }
    ld_http_response_parser_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static transcript whole, pieces;

    if (size == 0)
        return 0;
    size_t step = 1 + data[0] % 16;
    size_t body_max = (size_t)(data[0] >> 4) * 64; /* 0 to 960 bytes */
    read_all(&whole, data + 1, size - 1, size, body_max);
    read_all(&pieces, data + 1, size - 1, step, body_max);
    require(whole.error == pieces.error, "a refusal that depends on the pieces");
    require(whole.responses == pieces.responses && whole.len == pieces.len &&
                memcmp(whole.text, pieces.text, whole.len) == 0,
            "responses that depend on the pieces");
    return 0;
}
