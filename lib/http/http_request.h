/* http_request.h: requests read from a byte stream by libhttp-parser, within the
 * bounds of ld_http_limits. Internal to the runtime: the server (http_server.c) feeds
 * a reader what each connection reads, and queues what it yields.
 *
 * A reader yields one request at a time, so that whoever feeds it decides what happens
 * between two pipelined requests. Once it has refused its input, or yielded a request
 * after which the connection carries no other, it reads nothing more.
 */
#ifndef LD_HTTP_REQUEST_H
#define LD_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <http_parser.h>

#include "http.h"

enum ld_http_request_state {
    LD_HTTP_HELD,     /* with the handler */
    LD_HTTP_ANSWERED, /* answered, waiting for the requests before it */
    LD_HTTP_WRITING,  /* its response handed to libuv */
};

struct ld_http_conn;

struct ld_http_request {
    /* What the reader fills. text holds the URL, each header's name and value, then
     * the path and the query, each NUL-terminated. */
    char *text;
    size_t text_len, text_cap;
    size_t path_at, query_at; /* offsets in text */
    uint32_t headers;         /* name and value pairs after the URL */
    char *body;
    size_t body_len, body_cap;
    uint8_t method;  /* enum http_method */
    bool keep_alive; /* the connection may carry another request after this one */
    bool http_1_0;   /* keep-alive must then be said in the response */
    /* What the server keeps. */
    struct ld_http_conn *conn;     /* NULL once the connection has closed */
    struct ld_http_server *server; /* an orphan's, kept open until it is answered */
    ld_http_request *next;         /* in the connection's queue */
    uv_write_t write;
    char *out; /* the response, once answered */
    size_t out_len;
    uint8_t state; /* enum ld_http_request_state */
};

typedef struct ld_http_reader {
    http_parser parser;
    ld_http_limits limits; /* defaults filled in */
    ld_http_request *req;  /* being read, or NULL */
    ld_http_request *done; /* read whole by the last callback */
    uint32_t header_bytes; /* of req, so far */
    int piece;             /* what the last callback stored */
    int refusal;           /* the status the input was refused with, or 0 */
    bool ended;            /* the last request said the connection carries no other */
} ld_http_reader;

/* limits with a default in each field that is 0 (or limits NULL). */
void ld_http_limits_resolve(ld_http_limits *out, const ld_http_limits *limits);

/* A reader within limits, which are resolved here. */
void ld_http_reader_init(ld_http_reader *r, const ld_http_limits *limits);

/* Read data[0..len) up to the end of one request and return the bytes it took. *out is
 * that request, now the caller's, or NULL when the bytes ended first or were refused.
 * Once the reader has refused or ended, it takes every byte and reads none. */
size_t ld_http_reader_feed(ld_http_reader *r, const char *data, size_t len,
                           ld_http_request **out);

/* The status the input was refused with (400, 413, 431, 503, 505), or 0. */
static inline int ld_http_reader_refusal(const ld_http_reader *r)
{
    return r->refusal;
}

/* Some of a request has been read, and not all of it. */
static inline bool ld_http_reader_started(const ld_http_reader *r)
{
    return r->req != NULL;
}

/* Free the request under way, if any. */
void ld_http_reader_fini(ld_http_reader *r);

void ld_http_request_free(ld_http_request *req);

/* Grow a buffer of *cap bytes to hold need, doubling from 256; -ENOMEM leaves it as it
 * was. */
int ld_http_grow(char **buf, size_t *cap, size_t need);

#endif
