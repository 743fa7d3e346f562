/* http_client.c: what the transports of http_client.h share: a request's bytes, and
 * its reply parsed out of what was read (http_client_inbox.h). */
#include "http_client_inbox.h"

#include <errno.h>
#include <string.h>

int ld_http_inbox_open(ld_http_inbox *in)
{
    in->off = in->len = 0;
    in->heard = false;
    in->keep_alive = true;
    in->req_len = 0;
    return ld_http_response_parser_open(&in->parser, LD_HTTP_REPLY_MAX - 1);
}

void ld_http_inbox_close(ld_http_inbox *in)
{
    ld_http_response_parser_free(in->parser);
    in->parser = NULL;
}

int ld_http_inbox_request(ld_http_inbox *in, const char *target, const char *host)
{
    int n = ld_http_format_request(in->req, sizeof in->req, "GET", target, host, NULL,
                                   NULL, 0);

    if (n < 0)
        return n;
    if ((size_t)n >= sizeof in->req)
        return -EMSGSIZE;
    in->req_len = (size_t)n;
    in->heard = false;
    return 0;
}

/* Parsed bytes are dropped from the front first, so a read always has room. */
char *ld_http_inbox_space(ld_http_inbox *in, size_t *len)
{
    if (in->off > 0) {
        memmove(in->buf, in->buf + in->off, in->len - in->off);
        in->len -= in->off;
        in->off = 0;
    }
    *len = sizeof in->buf - in->len;
    return in->buf + in->len;
}

void ld_http_inbox_filled(ld_http_inbox *in, size_t n)
{
    in->len += n;
    in->heard = in->heard || n > 0;
}

/* A reply the parser has read whole, copied out. */
static int inbox_copy(ld_http_inbox *in, const ld_http_response *res, ld_http_reply *out)
{
    out->status = res->status;
    out->len = res->body_len;
    memcpy(out->body, res->body, res->body_len);
    out->body[res->body_len] = '\0';
    in->keep_alive = res->keep_alive && in->off == in->len;
    return 1;
}

/* The parser takes every byte up to the end of a reply (it keeps no pointer into
 * them), so the buffer never fills with a reply half read; and it refuses a body past
 * LD_HTTP_REPLY_MAX - 1 bytes, so the copy fits. */
int ld_http_inbox_take(ld_http_inbox *in, ld_http_reply *out)
{
    ld_http_response res;
    size_t used;
    int rc = ld_http_response_feed(in->parser, in->buf + in->off, in->len - in->off,
                                   &used, &res);

    in->off += used;
    return rc == 1 ? inbox_copy(in, &res, out) : rc;
}

int ld_http_inbox_end(ld_http_inbox *in, ld_http_reply *out)
{
    ld_http_response res;

    if (!in->heard)
        return -ECONNRESET;
    int rc = ld_http_response_end(in->parser, &res);
    if (rc == 1) {
        inbox_copy(in, &res, out);
        in->keep_alive = false;
        return 1;
    }
    return rc < 0 ? rc : -EPROTO;
}

int ld_http_inbox_receive(ld_http_inbox *in, ld_http_read_fn read, void *transport,
                          ld_http_reply *out)
{
    for (;;) {
        int rc = ld_http_inbox_take(in, out);
        if (rc != 0)
            return rc;
        size_t room;
        char *at = ld_http_inbox_space(in, &room);
        ssize_t n = read(transport, at, room);
        if (n == 0)
            return ld_http_inbox_end(in, out);
        if (n < 0)
            return (int)n;
        ld_http_inbox_filled(in, (size_t)n);
    }
}

bool ld_http_inbox_stale(const ld_http_inbox *in, int rc)
{
    return !in->heard && (rc == -ECONNRESET || rc == -EPIPE);
}
