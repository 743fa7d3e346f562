/* http_client.h: HTTP/1.1 GET clients to one server, each keeping its connections
 * alive from one request to the next, over three transports:
 *
 *   ld_http_conn      one connection on blocking sockets, for an OS thread
 *   ld_http_conns     a set of connections for the green threads of one scheduler,
 *                     over gt_io.h: a request parks its green thread
 *   ld_http_uv_conns  a set of connections on a uv_loop, for callbacks
 *
 * All three write the request with ld_http_format_request and read the response with
 * http.h's parser, one request per connection at a time: no pipelining. A set hands
 * a request an idle connection, or opens one when none is idle, and takes it back once
 * the response is read, so it opens as many connections as requests were ever under
 * way at once, and no more. A connection goes when its response says it cannot carry
 * another (Connection: close), or on any error.
 *
 * Stale connections. A kept-alive connection the server closed while it sat idle fails
 * the next request before a byte of the response comes back; that request is sent
 * once more, on a new connection. GET is idempotent, so this is safe.
 *
 * Deadlines. Every request ends within the timeout its client was opened with,
 * counted from the call: its connect, its write, the wait for its reply and a stale
 * request's second try (below) all fall within it. Past it the request fails with
 * -ETIMEDOUT and its connection is closed, so that a server that takes a connection
 * and never answers cannot hold a caller longer. A server that goes away ends the wait
 * sooner, with an error.
 *
 * Errors are negative errnos: a connect's (-ECONNREFUSED, ...), -ETIMEDOUT, -ECONNRESET
 * or -EPIPE when the server closed the connection, -EPROTO for bytes that are not a
 * response, -EMSGSIZE for a body of LD_HTTP_REPLY_MAX bytes or more, -EINVAL for a
 * target or host that is not one word, -ENOMEM. SIGPIPE is the program's to ignore
 * (http.h); the blocking transport sends with MSG_NOSIGNAL.
 */
#ifndef LD_HTTP_CLIENT_H
#define LD_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <uv.h>

/* The longest body a reply holds, with its NUL. */
#define LD_HTTP_REPLY_MAX 256

/* The longest Host header value, with its NUL. */
#define LD_HTTP_HOST_MAX 272

/* The timeout a client opened with 0 takes: a minute, as the longest /think. */
#define LD_HTTP_TIMEOUT_NS (60ull * 1000 * 1000 * 1000)

/* A response, copied out of the connection it came on. */
typedef struct ld_http_reply {
    int status;
    size_t len;                   /* of the body */
    char body[LD_HTTP_REPLY_MAX]; /* NUL-terminated */
} ld_http_reply;

/* --- One connection, blocking ----------------------------------------------------------
 */

typedef struct ld_http_conn ld_http_conn;

/* A client of the server at addr (IPv4 or IPv6), sending host as the Host header,
 * each request ending within timeout_ns (0: LD_HTTP_TIMEOUT_NS); it connects at its
 * first request. -ENOMEM, -EINVAL. */
int ld_http_conn_open(ld_http_conn **out, const struct sockaddr *addr, const char *host,
                      uint64_t timeout_ns);

/* GET target, blocking the calling OS thread until the reply is read. */
int ld_http_conn_get(ld_http_conn *c, const char *target, ld_http_reply *out);

/* Close the connection, if any, and free c. NULL does nothing. */
void ld_http_conn_close(ld_http_conn *c);

/* --- A set of connections for the green threads of one scheduler -----------------------
 */

typedef struct ld_http_conns ld_http_conns;

/* A set for the green threads of the calling thread's scheduler, to the server at
 * addr, sending host as the Host header, each request ending within timeout_ns (0:
 * LD_HTTP_TIMEOUT_NS); it opens no connection yet. Its connections belong to that
 * scheduler (gt_io.h). -ENOMEM, -EINVAL. */
int ld_http_conns_open(ld_http_conns **out, const struct sockaddr *addr, const char *host,
                       uint64_t timeout_ns);

/* In a green thread of the set's scheduler: GET target on an idle connection or a new
 * one, parking until the reply is read. Any number of green threads may be in it at
 * once, each on a connection of its own. */
int ld_http_conns_get(ld_http_conns *p, const char *target, ld_http_reply *out);

/* On the scheduler's thread, with no request under way: close every connection and
 * free the set, before the scheduler is destroyed (gt_io.h's Closing). NULL does
 * nothing. */
void ld_http_conns_close(ld_http_conns *p);

/* --- A set of connections on a uv_loop -------------------------------------------------
 */

typedef struct ld_http_uv_conns ld_http_uv_conns;

/* How a request of ld_http_uv_get ends: rc 0 with the reply, or a negative errno (and
 * reply NULL). Called on the loop's thread, from inside uv_run; it may start the next
 * request. */
typedef void (*ld_http_uv_done)(void *arg, int rc, const ld_http_reply *reply);

/* A set on loop, used on the loop's thread only, to the server at addr, sending host
 * as the Host header, each request ending within timeout_ns (0: LD_HTTP_TIMEOUT_NS).
 * -ENOMEM, -EINVAL. */
int ld_http_uv_conns_open(ld_http_uv_conns **out, uv_loop_t *loop,
                          const struct sockaddr *addr, const char *host,
                          uint64_t timeout_ns);

/* GET target on an idle connection or a new one. Returns 0, and done(arg, ...) is then
 * called once, later; or a negative errno, and it is not called. */
int ld_http_uv_get(ld_http_uv_conns *p, const char *target, ld_http_uv_done done,
                   void *arg);

/* With no request under way: close every connection; the set is freed once the loop
 * has run their close callbacks. NULL does nothing. */
void ld_http_uv_conns_close(ld_http_uv_conns *p);

#endif
