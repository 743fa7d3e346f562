/* http.h: HTTP/1.1 on libhttp-parser: a server on a uv_loop, and the pieces every
 * client shares whatever its transport (a request's bytes, a response parser).
 *
 * Server. An ld_http_server listens on one address, on one uv_loop, and is used on that
 * loop's thread only; a loop can hold several, each on its own address. Each request
 * read whole goes to the handler as an ld_http_request, which stays valid until the
 * handler answers it with ld_http_respond: at once, or later from anything that runs on
 * the loop's thread (a uv_timer, a deadline), exactly once.
 *
 * Keep-alive. A connection carries request after request, as HTTP/1.1 says, until the
 * client asks for close (or speaks HTTP/1.0 without keep-alive), a limit below ends it,
 * or it is idle for request_timeout_ms.
 *
 * Pipelining. Requests that arrive before the earlier ones are answered are read and
 * handed to the handler at once, so their waits overlap, up to `pipeline` requests per
 * connection read and not yet written back (then reading pauses until one is). Their
 * responses go out in the order the requests came, whatever order the handler answers
 * them in: one answered early waits, buffered, for those before it.
 *
 * A connection that closes while the handler holds some of its requests (the client
 * left, a limit closed it, the server is closing) leaves those requests valid: the
 * handler still answers each once, and ld_http_respond then frees it, sends nothing and
 * returns -ECONNRESET. Nothing else the handler holds points into the connection. An
 * orphan's body is freed when it is orphaned (ld_http_request_body then gives ""), and
 * ld_http_request_orphaned says which requests are orphans, so that a handler can drop
 * work queued for a client that has gone. An orphan keeps counting towards `held`
 * until it is answered.
 *
 * Bounds (ld_http_limits). A request past one is refused with the status named, sent
 * after the responses to the requests before it, and its connection closed; the server
 * goes on serving every other connection.
 *
 * SIGPIPE. libuv writes with write(2), so a write to a client that has gone raises
 * SIGPIPE, whose default kills the process. The program must ignore it, or block it in
 * the loop's thread; the server changes no signal disposition itself.
 *
 * Functions return 0 or a negative errno; libuv's errors are negative errnos too.
 */
#ifndef LD_HTTP_H
#define LD_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

/* --- Bounds -------------------------------------------------------------------- */

/* Each bound's default, what a 0 in ld_http_limits stands for. */
#define LD_HTTP_HEADER_BYTES 8192u          /* 431 */
#define LD_HTTP_HEADERS 64u                 /* 431 */
#define LD_HTTP_BODY_BYTES 65536u           /* 413 */
#define LD_HTTP_REQUESTS 10000u             /* Connection: close on the last */
#define LD_HTTP_CONNECTIONS 1024u           /* 503 */
#define LD_HTTP_REQUEST_TIMEOUT_MS 20000u   /* 408 */
#define LD_HTTP_PIPELINE 32u                /* reading pauses */
#define LD_HTTP_HELD_REQUESTS 4096u         /* 503; or twice connections, if more */
#define LD_HTTP_HELD_BODY_BYTES (32u << 20) /* 503 */

typedef struct ld_http_limits {
    /* Bytes of a request's URL and of its header names and values, together; the
     * separators between them are bounded by libhttp-parser's own 80 KiB. 431. */
    uint32_t header_bytes;
    uint32_t headers;    /* header fields in one request: 431 */
    uint32_t body_bytes; /* a declared Content-Length past it, or a chunked body that
                            grows past it: 413 */
    /* A count, not a rate: the connection's last request. Its response says
     * Connection: close, and nothing after it on that connection is read (RFC 9112
     * 9.6), so a client opens a new connection for the next. */
    uint32_t requests;
    /* Connections open at once. One more is answered 503 and closed at once. */
    uint32_t connections;
    /* The longest the server waits on a client while it holds none of the client's
     * requests, counted from the accept or from the handler's last answer: for a
     * request to arrive whole (headers and body; slowloris), for the client to read
     * the responses written to it, or for it to send its next request. A request cut
     * off part way is answered 408; an idle connection is closed with no answer. */
    uint32_t request_timeout_ms;
    uint32_t pipeline; /* requests per connection read and not yet written back */
    /* Requests read and not yet written back or freed, on every connection together,
     * those orphaned by a closed connection included: one more is refused 503. With
     * pipeline, it bounds what clients that pipeline and close can leave behind. */
    uint32_t held;
    /* Bytes of the bodies of those requests (as allocated, up to twice their length),
     * together: one more request with a body is refused 503. A connection that pauses
     * at its pipeline reads nothing more, so it may not see its client go until an
     * answer is written; this bounds what such connections keep meanwhile. */
    uint32_t held_body_bytes;
} ld_http_limits;

/* --- Server -------------------------------------------------------------------- */

typedef struct ld_http_server ld_http_server;
typedef struct ld_http_request ld_http_request;

/* Called on the loop's thread for each request read whole. */
typedef void (*ld_http_handler)(ld_http_request *req, void *ctx);

/* What a server has done since it opened. */
typedef struct ld_http_server_stats {
    uint64_t accepted;          /* connections served */
    uint64_t open;              /* connections open now */
    uint64_t peak_open;         /* the most open at once */
    uint64_t requests;          /* requests read whole and handed to the handler */
    uint64_t orphaned;          /* of those, left by a connection that closed first */
    uint64_t held;              /* requests held now, orphans included */
    uint64_t held_body_bytes;   /* their bodies' bytes now */
    uint64_t bad_request;       /* 400: bytes libhttp-parser refuses, or no URL path */
    uint64_t timed_out;         /* 408 */
    uint64_t body_too_large;    /* 413 */
    uint64_t headers_too_large; /* 431: header bytes or header fields */
    uint64_t unavailable;       /* 503: connections or requests held past their bounds, or
                                   no memory for one */
    uint64_t bad_version;       /* 505: a major version other than 1 */
} ld_http_server_stats;

/* Listen on addr (IPv4 or IPv6; port 0 takes a free one) on loop, handing requests to
 * handler(req, ctx). limits NULL, or any field of it 0, takes the defaults above.
 * -ENOMEM, or libuv's error from binding or listening (-EADDRINUSE, -EACCES, ...). */
int ld_http_server_open(ld_http_server **out, uv_loop_t *loop,
                        const struct sockaddr *addr, const ld_http_limits *limits,
                        ld_http_handler handler, void *ctx);

/* As ld_http_server_open, with SO_REUSEPORT: servers on several loops, one per
 * carrier as Netty runs an event loop per core, open on one address (the first with
 * port 0, the others on the port it got) and the kernel spreads the connections
 * among them. */
int ld_http_server_open_shared(ld_http_server **out, uv_loop_t *loop,
                               const struct sockaddr *addr, const ld_http_limits *limits,
                               ld_http_handler handler, void *ctx);

/* The port the server listens on: addr's, or the one the system chose for port 0. */
int ld_http_server_port(const ld_http_server *s);

void ld_http_server_stats_get(const ld_http_server *s, ld_http_server_stats *out);

/* Stop listening and close every connection now; the handler is called no more, and
 * requests it holds are answered as above. The server is freed once the loop has run
 * the close callbacks (uv_run with UV_RUN_NOWAIT is enough). */
void ld_http_server_close(ld_http_server *s);

/* --- A request, as the handler sees it --------------------------------------------- */

/* "GET", "POST", ... */
const char *ld_http_request_method(const ld_http_request *req);

/* The URL's path and query, as sent (not percent-decoded); the query is "" when there
 * is none. */
const char *ld_http_request_path(const ld_http_request *req);
const char *ld_http_request_query(const ld_http_request *req);

/* The value of the first header named name (any case), or NULL. */
const char *ld_http_request_header(const ld_http_request *req, const char *name);

/* The body, *len bytes (0 and "" when there is none, or the request is an orphan). */
const char *ld_http_request_body(const ld_http_request *req, size_t *len);

/* Whether req's connection has closed: its answer will go nowhere. */
int ld_http_request_orphaned(const ld_http_request *req);

/* Answer req with status (200-599) and body[0..len), after the header lines in
 * `headers` ("Name: value\r\n" each; NULL for none). The server adds Content-Length and
 * Connection, and leaves the body out for HEAD (and for 204, with its length). The
 * request is freed either way; -ECONNRESET when its connection had closed, -EINVAL (and a
 * 500 sent instead) for a status out of range, -ENOMEM (and the connection closed) when
 * the response could not be built. */
int ld_http_respond(ld_http_request *req, int status, const char *headers,
                    const void *body, size_t len);

/* The standard reason phrase of status ("Not Found"), "Unknown" for others. */
const char *ld_http_reason(int status);

/* --- Queries --------------------------------------------------------------------- */

/* The value of the first parameter called name in query ("a=1&b=x%20y"),
 * percent-decoded ('+' as a space) into out[0..size), NUL-terminated. Returns its
 * length; -ENOENT when there is no such parameter, -EINVAL for a bad %-escape or a NUL
 * in it, -ENOSPC when it does not fit. */
int ld_http_query_get(const char *query, const char *name, char *out, size_t size);

/* --- Client side: any transport ------------------------------------------------------
 */

/* Write the request `method target HTTP/1.1` with Host: host, the header lines in
 * `headers` (as for ld_http_respond, or NULL), Content-Length when len > 0, and
 * body[0..len), into buf[0..size). Returns the request's length, as snprintf does: it
 * was written whole only when that is below size. -EINVAL when method, target or host
 * is empty or holds a space or a control character. Connections are kept alive unless
 * headers says "Connection: close". */
int ld_http_format_request(char *buf, size_t size, const char *method, const char *target,
                           const char *host, const char *headers, const void *body,
                           size_t len);

typedef struct ld_http_response_parser ld_http_response_parser;

/* One response, read whole: valid until the next feed or the parser's free. */
typedef struct ld_http_response {
    int status;
    int keep_alive; /* the connection may carry the next request */
    const char *body;
    size_t body_len;
} ld_http_response;

/* A parser for the responses of one connection, in order, to requests other than HEAD,
 * with bodies up to body_max bytes. -ENOMEM. */
int ld_http_response_parser_open(ld_http_response_parser **out, size_t body_max);

/* Read from data[0..len) up to the end of the next response; *used says how many
 * bytes it took. Returns 1 with *res filled when a response ended there (the bytes
 * after it begin the next), 0 when all len were used and it has not ended yet; -EPROTO
 * for bytes that are not an HTTP/1.x response, -EMSGSIZE for a body past body_max.
 * After an error every call fails. */
int ld_http_response_feed(ld_http_response_parser *p, const char *data, size_t len,
                          size_t *used, ld_http_response *res);

/* The connection ended: 1 with *res filled for a response that ends with its
 * connection (one with no Content-Length), 0 when none was under way, -EPROTO when one
 * was cut off. */
int ld_http_response_end(ld_http_response_parser *p, ld_http_response *res);

void ld_http_response_parser_free(ld_http_response_parser *p);

#endif
