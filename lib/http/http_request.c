/* http_request.c: libhttp-parser's callbacks turned into requests, each bound of
 * ld_http_limits checked as the bytes arrive, and what the handler reads of a request.
 *
 * The parser is paused at the end of each request, so that one feed yields at most
 * one; resuming it goes on with the next byte. Its own header limit (80 KiB of header
 * bytes, separators included) stays as a backstop behind ours.
 */
#include "http_request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* What a callback stores: pieces of one kind arriving in a row are one string split
 * across reads; a change of kind starts the next string. */
enum { PIECE_NONE, PIECE_URL, PIECE_NAME, PIECE_VALUE, PIECE_TRAILER };

/* Requests held by default: one per connection, and as many again orphaned, at the
 * least. */
static uint32_t held_default(uint32_t connections)
{
    uint64_t two_each = 2 * (uint64_t)connections;

    if (two_each <= LD_HTTP_HELD_REQUESTS)
        return LD_HTTP_HELD_REQUESTS;
    return two_each < UINT32_MAX ? (uint32_t)two_each : UINT32_MAX;
}

void ld_http_limits_resolve(ld_http_limits *out, const ld_http_limits *limits)
{
    static const ld_http_limits defaults = {
        .header_bytes = LD_HTTP_HEADER_BYTES,
        .headers = LD_HTTP_HEADERS,
        .body_bytes = LD_HTTP_BODY_BYTES,
        .requests = LD_HTTP_REQUESTS,
        .connections = LD_HTTP_CONNECTIONS,
        .request_timeout_ms = LD_HTTP_REQUEST_TIMEOUT_MS,
        .pipeline = LD_HTTP_PIPELINE,
        .held = LD_HTTP_HELD_REQUESTS,
        .held_body_bytes = LD_HTTP_HELD_BODY_BYTES,
    };
    ld_http_limits in = limits ? *limits : defaults;

    out->header_bytes = in.header_bytes ? in.header_bytes : defaults.header_bytes;
    out->headers = in.headers ? in.headers : defaults.headers;
    out->body_bytes = in.body_bytes ? in.body_bytes : defaults.body_bytes;
    out->requests = in.requests ? in.requests : defaults.requests;
    out->connections = in.connections ? in.connections : defaults.connections;
    out->request_timeout_ms =
        in.request_timeout_ms ? in.request_timeout_ms : defaults.request_timeout_ms;
    out->pipeline = in.pipeline ? in.pipeline : defaults.pipeline;
    out->held = in.held ? in.held : held_default(out->connections);
    out->held_body_bytes =
        in.held_body_bytes ? in.held_body_bytes : defaults.held_body_bytes;
}

/* Refuse the input from inside a callback: the parser stops with a callback error. */
static int reader_refuse(ld_http_reader *r, int status)
{
    if (!r->refusal)
        r->refusal = status;
    return -1;
}

int ld_http_grow(char **buf, size_t *cap, size_t need)
{
    size_t cap2 = *cap ? *cap : 256;

    while (cap2 < need)
        cap2 *= 2;
    if (cap2 == *cap)
        return 0;
    char *grown = realloc(*buf, cap2);
    if (!grown)
        return -ENOMEM;
    *buf = grown;
    *cap = cap2;
    return 0;
}

static int text_append(ld_http_request *q, const char *at, size_t n)
{
    if (ld_http_grow(&q->text, &q->text_cap, q->text_len + n) != 0)
        return -ENOMEM;
    memcpy(q->text + q->text_len, at, n);
    q->text_len += n;
    return 0;
}

static int on_message_begin(http_parser *p)
{
    ld_http_reader *r = p->data;

    r->req = calloc(1, sizeof *r->req);
    if (!r->req)
        return reader_refuse(r, 503);
    r->header_bytes = 0;
    r->piece = PIECE_NONE;
    return 0;
}

/* Store a piece of the URL, a header name or a value, within header_bytes and headers.
 * Trailers after a chunked body count against header_bytes but are not kept. */
static int reader_piece(ld_http_reader *r, int piece, const char *at, size_t n)
{
    ld_http_request *q = r->req;

    if (n > r->limits.header_bytes - r->header_bytes)
        return reader_refuse(r, 431);
    r->header_bytes += (uint32_t)n;
    if (r->piece == PIECE_TRAILER)
        return 0;
    if (piece != r->piece) {
        if (r->piece != PIECE_NONE && text_append(q, "", 1) != 0)
            return reader_refuse(r, 503);
        if (piece == PIECE_NAME && ++q->headers > r->limits.headers)
            return reader_refuse(r, 431);
        r->piece = piece;
    }
    return text_append(q, at, n) == 0 ? 0 : reader_refuse(r, 503);
}

static int on_url(http_parser *p, const char *at, size_t n)
{
    return reader_piece(p->data, PIECE_URL, at, n);
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    return reader_piece(p->data, PIECE_NAME, at, n);
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    return reader_piece(p->data, PIECE_VALUE, at, n);
}

/* The path and the query out of the URL, stored after the headers. A URL with no path
 * (an absolute one naming only a host) asks for "/". */
static int reader_split_url(ld_http_reader *r)
{
    ld_http_request *q = r->req;
    struct http_parser_url u;

    http_parser_url_init(&u);
    if (http_parser_parse_url(q->text, strlen(q->text), 0, &u) != 0)
        return reader_refuse(r, 400);
    bool has_path = u.field_set & (1u << UF_PATH);
    size_t path_len = has_path ? u.field_data[UF_PATH].len : 1;
    size_t query_len = u.field_set & (1u << UF_QUERY) ? u.field_data[UF_QUERY].len : 0;
    /* Room first, so that the pieces copied out of the URL stay where they are. */
    if (ld_http_grow(&q->text, &q->text_cap, q->text_len + path_len + query_len + 2))
        return reader_refuse(r, 503);
    q->path_at = q->text_len;
    (void)text_append(q, has_path ? q->text + u.field_data[UF_PATH].off : "/", path_len);
    (void)text_append(q, "", 1);
    q->query_at = q->text_len;
    (void)text_append(q, q->text + u.field_data[UF_QUERY].off, query_len);
    (void)text_append(q, "", 1);
    return 0;
}

/* The headers are in: end the last string (a name with no value callback gets an empty
 * value), check the version and the declared body length, and split the URL. */
static int on_headers_complete(http_parser *p)
{
    ld_http_reader *r = p->data;
    ld_http_request *q = r->req;
    size_t ends = r->piece == PIECE_NAME ? 2 : 1;

    if (text_append(q, "\0", ends) != 0)
        return reader_refuse(r, 503);
    r->piece = PIECE_TRAILER;
    if (p->http_major != 1)
        return reader_refuse(r, 505);
    if (p->method == HTTP_CONNECT)
        return reader_refuse(r, 400);
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > r->limits.body_bytes)
        return reader_refuse(r, 413);
    q->method = (uint8_t)p->method;
    q->http_1_0 = p->http_minor == 0;
    return reader_split_url(r);
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    ld_http_reader *r = p->data;
    ld_http_request *q = r->req;

    if (n > r->limits.body_bytes - q->body_len)
        return reader_refuse(r, 413);
    if (ld_http_grow(&q->body, &q->body_cap, q->body_len + n + 1) != 0)
        return reader_refuse(r, 503);
    memcpy(q->body + q->body_len, at, n);
    q->body_len += n;
    q->body[q->body_len] = '\0';
    return 0;
}

/* A request read whole: hand it over, and pause so the feed returns with it. After an
 * upgrade the bytes are another protocol's, which this server does not speak. */
static int on_message_complete(http_parser *p)
{
    ld_http_reader *r = p->data;

    r->req->keep_alive = http_should_keep_alive(p) && !p->upgrade;
    r->done = r->req;
    r->req = NULL;
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings reader_settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void ld_http_reader_init(ld_http_reader *r, const ld_http_limits *limits)
{
    memset(r, 0, sizeof *r);
    ld_http_limits_resolve(&r->limits, limits);
    http_parser_init(&r->parser, HTTP_REQUEST);
    r->parser.data = r;
}

/* The parser's own refusals: its header limit is a 431, anything else a 400. */
static int reader_status(enum http_errno e)
{
    return e == HPE_HEADER_OVERFLOW ? 431 : 400;
}

size_t ld_http_reader_feed(ld_http_reader *r, const char *data, size_t len,
                           ld_http_request **out)
{
    *out = NULL;
    if (r->refusal || r->ended || len == 0)
        return len;
    size_t n = http_parser_execute(&r->parser, &reader_settings, data, len);
    enum http_errno e = HTTP_PARSER_ERRNO(&r->parser);
    if (e == HPE_PAUSED) {
        http_parser_pause(&r->parser, 0);
        *out = r->done;
        r->done = NULL;
        r->ended = !(*out)->keep_alive;
        return n;
    }
    if (e != HPE_OK) {
        if (!r->refusal)
            r->refusal = reader_status(e);
        ld_http_reader_fini(r);
        return len;
    }
    return n;
}

void ld_http_reader_fini(ld_http_reader *r)
{
    ld_http_request_free(r->req);
    r->req = NULL;
}

void ld_http_request_free(ld_http_request *req)
{
    if (!req)
        return;
    free(req->text);
    free(req->body);
    free(req->out);
    free(req);
}

const char *ld_http_request_method(const ld_http_request *req)
{
    return http_method_str((enum http_method)req->method);
}

const char *ld_http_request_path(const ld_http_request *req)
{
    return req->text + req->path_at;
}

const char *ld_http_request_query(const ld_http_request *req)
{
    return req->text + req->query_at;
}

/* The headers follow the URL as name, value, name, value, each NUL-terminated. */
const char *ld_http_request_header(const ld_http_request *req, const char *name)
{
    const char *at = req->text + strlen(req->text) + 1;

    for (uint32_t i = 0; i < req->headers; i++) {
        const char *value = at + strlen(at) + 1;
        if (strcasecmp(at, name) == 0)
            return value;
        at = value + strlen(value) + 1;
    }
    return NULL;
}

const char *ld_http_request_body(const ld_http_request *req, size_t *len)
{
    *len = req->body_len;
    return req->body ? req->body : "";
}
