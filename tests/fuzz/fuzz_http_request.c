/* fuzz_http_request.c: arbitrary bytes into the HTTP server's request reader
 * (lib/http/http_request.h), the path every byte a client sends goes through, under small
 * bounds so that the fuzzer reaches each of them. The first byte of an input picks how
 * it is split; the rest is what the client sends.
 *
 * What must hold for every input, or the harness aborts:
 * - read whole, and read in pieces of 1 to 16 bytes, the input gives the same requests,
 *   and is refused in both or neither: a request does not depend on how the network
 *   cut it up (which status a refusal has may: libhttp-parser reports a piece of a
 *   header at the end of a read, so an input that both runs past header_bytes and
 *   holds a bad byte is a 431 read in pieces and may be a 400 read whole);
 * - every request is within the bounds: its URL, header names and values within
 *   header_bytes, its header fields within headers, its body within body_bytes, and
 *   each of its headers is found by name;
 * - a refusal is one of the statuses the reader documents, and nothing is read after
 *   it, nor after a request that ends its connection.
 * ASan sees every read of a request's strings, and that nothing leaks.
 *
 * Built with clang as a libFuzzer target; the replay driver (replay.c) runs the same
 * function over the checked-in corpus-http in any build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_request.h"

#define TRANSCRIPT_MAX 65536

static const ld_http_limits fuzz_limits = {
    .header_bytes = 256,
    .headers = 8,
    .body_bytes = 512,
    .requests = 100,
    .connections = 1,
    .request_timeout_ms = 1,
    .pipeline = 4,
};

/* Abort with the broken property: libFuzzer then saves the input that broke it. */
static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_http_request: %s\n", what);
        abort();
    }
}

typedef struct transcript {
    char text[TRANSCRIPT_MAX];
    size_t len;
    int refusal;
    int requests;
} transcript;

static void note(transcript *t, const char *s, size_t n)
{
    size_t room = sizeof t->text - t->len;
    size_t take = n < room ? n : room;

    memcpy(t->text + t->len, s, take);
    t->len += take;
}

/* Check one request against the bounds and add all of it to the transcript. */
static void check_request(transcript *t, const ld_http_request *req)
{
    const char *path = ld_http_request_path(req);
    const char *query = ld_http_request_query(req);
    const char *at = req->text + strlen(req->text) + 1;
    size_t bytes = strlen(req->text), body_len;
    const char *body = ld_http_request_body(req, &body_len);

    require(req->headers <= fuzz_limits.headers, "more header fields than the bound");
    require(body_len <= fuzz_limits.body_bytes, "a body past the bound");
    require(path[0] != '\0', "an empty path");
    note(t, ld_http_request_method(req), strlen(ld_http_request_method(req)));
    note(t, path, strlen(path) + 1);
    note(t, query, strlen(query) + 1);
    for (uint32_t i = 0; i < req->headers; i++) {
        const char *value = at + strlen(at) + 1;
        const char *found = ld_http_request_header(req, at);
        require(found && found >= req->text && found < req->text + req->text_len,
                "a header not found by its name");
        bytes += strlen(at) + strlen(value);
        note(t, at, strlen(at) + 1);
        note(t, value, strlen(value) + 1);
        at = value + strlen(value) + 1;
    }
    require(bytes <= fuzz_limits.header_bytes, "header bytes past the bound");
    note(t, body, body_len);
    note(t, req->keep_alive ? "K" : "C", 1);
    t->requests++;
}

/* Read data[0..len) in pieces of at most step bytes, as a connection would. */
static void read_all(transcript *t, const uint8_t *data, size_t len, size_t step)
{
    ld_http_reader r;
    size_t at = 0;
    int stopped = 0;

    memset(t, 0, sizeof *t);
    ld_http_reader_init(&r, &fuzz_limits);
    while (at < len) {
        size_t piece = len - at < step ? len - at : step;
        size_t used = 0;
        while (used < piece) {
            ld_http_request *req;
            size_t n = ld_http_reader_feed(&r, (const char *)data + at + used,
                                           piece - used, &req);
            require(n > 0 && n <= piece - used, "a feed that took no bytes, or too many");
            used += n;
            if (req) {
                require(!stopped, "a request after a refusal or a last request");
                check_request(t, req);
                stopped = !req->keep_alive;
                ld_http_request_free(req);
            }
            if (ld_http_reader_refusal(&r))
                stopped = 1;
        }
        at += piece;
    }
    t->refusal = ld_http_reader_refusal(&r);
    ld_http_reader_fini(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static transcript whole, pieces;

    if (size == 0)
        return 0;
    size_t step = 1 + data[0] % 16;
    read_all(&whole, data + 1, size - 1, size);
    read_all(&pieces, data + 1, size - 1, step);
    int r = whole.refusal;
    require(r == 0 || r == 400 || r == 413 || r == 431 || r == 503 || r == 505,
            "a refusal the reader does not document");
    require(!whole.refusal == !pieces.refusal, "a refusal that depends on the pieces");
    require(whole.requests == pieces.requests && whole.len == pieces.len &&
                memcmp(whole.text, pieces.text, whole.len) == 0,
            "requests that depend on the pieces");
    return 0;
}
