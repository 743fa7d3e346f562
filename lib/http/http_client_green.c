/* http_client_green.c: kept-alive connections for the green threads of one
 * scheduler, over gt_io.h (http_client.h).
 *
 * The green threads of a scheduler take turns on one carrier, so the set needs no
 * lock: a request takes an idle connection off the list, or opens one, and puts it
 * back once its reply is read, each between two parks. A connection belongs to one
 * request at a time, so its reads and writes never meet another thread's (-EBUSY).
 * The request's bytes and the reply's live in the connection, on the heap, so a
 * parked thread's stack holds little to freeze. Each park (connect, write, read) is
 * given what is left of the request's time.
 */
#include "http_client_inbox.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "gt_io.h"

typedef struct green_conn green_conn;

struct green_conn {
    ld_io_stream *stream;
    green_conn *next;  /* on the idle list */
    bool reused;       /* it has carried a request before this one */
    uint64_t deadline; /* its request's, on uv_hrtime's clock */
    ld_http_inbox in;
};

struct ld_http_conns {
    struct sockaddr_storage addr;
    green_conn *idle; /* the most recently used first */
    uint64_t timeout_ns;
    char host[LD_HTTP_HOST_MAX];
};

int ld_http_conns_open(ld_http_conns **out, const struct sockaddr *addr, const char *host,
                       uint64_t timeout_ns)
{
    size_t len = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                             : sizeof(struct sockaddr_in);

    if (strlen(host) >= LD_HTTP_HOST_MAX ||
        (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
        return -EINVAL;
    ld_http_conns *set = calloc(1, sizeof *set);
    if (!set)
        return -ENOMEM;
    memcpy(&set->addr, addr, len);
    strcpy(set->host, host);
    set->timeout_ns = ld_http_timeout(timeout_ns);
    *out = set;
    return 0;
}

static void conn_free(green_conn *c)
{
    ld_io_close(c->stream);
    ld_http_inbox_close(&c->in);
    free(c);
}

/* What a park may take of the time left before deadline: gt_io.h's 0 would be no
 * limit at all, so a deadline passed leaves 1 ns. */
static uint64_t park_for(uint64_t deadline)
{
    uint64_t left = ld_http_left(deadline);
    return left ? left : 1;
}

/* In a green thread: a new connection, parked until the server has taken it, by
 * deadline. */
static int conn_new(ld_http_conns *set, uint64_t deadline, green_conn **out)
{
    green_conn *c = calloc(1, sizeof *c);

    if (!c)
        return -ENOMEM;
    c->deadline = deadline;
    int rc = ld_http_inbox_open(&c->in);
    if (rc == 0)
        rc = ld_io_connect((struct sockaddr *)&set->addr, park_for(deadline), &c->stream);
    if (rc != 0) {
        conn_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

/* A read on the connection's green-thread stream, parking its caller. */
static ssize_t stream_read(void *transport, void *buf, size_t len)
{
    const green_conn *c = transport;
    return ld_io_read(c->stream, buf, len, park_for(c->deadline));
}

static int conn_exchange(ld_http_conns *set, green_conn *c, const char *target,
                         ld_http_reply *out)
{
    int rc = ld_http_inbox_request(&c->in, target, set->host);

    if (rc == 0)
        rc = ld_io_write(c->stream, c->in.req, c->in.req_len, park_for(c->deadline));
    if (rc == 0)
        rc = ld_http_inbox_receive(&c->in, stream_read, c, out);
    return rc == 1 ? 0 : rc;
}

/* An idle connection, or a new one, for a request due by deadline. */
static int conn_take(ld_http_conns *set, uint64_t deadline, green_conn **out)
{
    if (!set->idle)
        return conn_new(set, deadline, out);
    *out = set->idle;
    set->idle = set->idle->next;
    (*out)->deadline = deadline;
    return 0;
}

int ld_http_conns_get(ld_http_conns *set, const char *target, ld_http_reply *out)
{
    uint64_t deadline = uv_hrtime() + set->timeout_ns;
    green_conn *c;
    int rc = conn_take(set, deadline, &c);

    if (rc != 0)
        return rc;
    rc = conn_exchange(set, c, target, out);
    if (rc != 0 && c->reused && ld_http_inbox_stale(&c->in, rc)) {
        conn_free(c);
        rc = conn_new(set, deadline, &c);
        if (rc != 0)
            return rc;
        rc = conn_exchange(set, c, target, out);
    }
    if (rc != 0 || !c->in.keep_alive) {
        conn_free(c);
        return rc;
    }
    c->reused = true;
    c->next = set->idle;
    set->idle = c;
    return 0;
}

void ld_http_conns_close(ld_http_conns *set)
{
    if (!set)
        return;
    while (set->idle) {
        green_conn *c = set->idle;
        set->idle = c->next;
        conn_free(c);
    }
    free(set);
}
