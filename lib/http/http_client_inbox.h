/* http_client_inbox.h: what every transport of http_client.h keeps per connection:
 * the request's bytes, and the bytes read and not yet parsed, with the parser that
 * turns them into replies. Internal to the runtime.
 */
#ifndef LD_HTTP_CLIENT_INBOX_H
#define LD_HTTP_CLIENT_INBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "http.h"
#include "http_client.h"

/* Bytes of a request, and of the read buffer. */
#define LD_HTTP_REQUEST_MAX 512
#define LD_HTTP_INBOX_BYTES 1024

typedef struct ld_http_inbox {
    ld_http_response_parser *parser;
    size_t off, len; /* buf[off..len) read and not yet parsed */
    bool heard;      /* a byte has come since the request went */
    bool keep_alive; /* the last reply leaves the connection able to carry another */
    size_t req_len;  /* of req */
    char req[LD_HTTP_REQUEST_MAX];
    char buf[LD_HTTP_INBOX_BYTES];
} ld_http_inbox;

/* A parser for a new connection. -ENOMEM. */
int ld_http_inbox_open(ld_http_inbox *in);

void ld_http_inbox_close(ld_http_inbox *in);

/* Write GET target, with host as its Host header, into in->req, and expect its reply.
 * -EINVAL for a target or host that is not a word, -EMSGSIZE for one too long. */
int ld_http_inbox_request(ld_http_inbox *in, const char *target, const char *host);

/* Room for the next read: *len bytes (> 0) at the pointer returned. */
char *ld_http_inbox_space(ld_http_inbox *in, size_t *len);

/* n bytes were read into the space. */
void ld_http_inbox_filled(ld_http_inbox *in, size_t n);

/* The reply out of what was read: 1 with *out filled, 0 when more must be read, or a
 * negative errno (http_client.h). Bytes after the reply mean the server sent what was
 * not asked for: the connection then keeps no more (keep_alive false). */
int ld_http_inbox_take(ld_http_inbox *in, ld_http_reply *out);

/* The connection ended: 1 with *out for a reply that ends with it, or a negative
 * errno: -ECONNRESET when not a byte of the reply had come, -EPROTO when it was cut
 * off. */
int ld_http_inbox_end(ld_http_inbox *in, ld_http_reply *out);

/* A transport's read: up to len bytes into buf; their count, 0 at the end of the
 * connection, or a negative errno. */
typedef ssize_t (*ld_http_read_fn)(void *transport, void *buf, size_t len);

/* Read with read(transport, ...) until the reply is whole or the connection ends:
 * what ld_http_inbox_take or ld_http_inbox_end returns once either says 1 or fails. */
int ld_http_inbox_receive(ld_http_inbox *in, ld_http_read_fn read, void *transport,
                          ld_http_reply *out);

/* A client's timeout, 0 standing for the default. */
static inline uint64_t ld_http_timeout(uint64_t timeout_ns)
{
    return timeout_ns ? timeout_ns : LD_HTTP_TIMEOUT_NS;
}

/* The time left before deadline (uv_hrtime's clock), in ns; 0 once it has passed. */
static inline uint64_t ld_http_left(uint64_t deadline)
{
    uint64_t now = uv_hrtime();
    return deadline > now ? deadline - now : 0;
}

/* Whether rc, from a request on a connection that had carried one before, says the
 * server had closed it while idle: the request may go again on a new one. */
bool ld_http_inbox_stale(const ld_http_inbox *in, int rc);

#endif
