/* http_client_uv.c: kept-alive connections on a uv_loop, each request a chain of
 * libuv callbacks: connect (for a new connection), write, read until the reply is
 * whole (http_client.h).
 *
 * A connection belongs to one request at a time; it reads only while that request
 * waits for its reply, so an idle connection keeps the loop alive no more than an
 * idle socket does. Its timer runs while a request is under way, and fails it at its
 * deadline. The set is freed with its last connection, once libuv has closed every
 * handle.
 */
#include "http_client_inbox.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

typedef struct uv_conn uv_conn;

struct ld_http_uv_conns {
    uv_loop_t *loop;
    struct sockaddr_storage addr;
    uv_conn *idle; /* the most recently used first */
    size_t alive;  /* its connections not yet closed by libuv */
    uint64_t timeout_ns;
    bool closing; /* ld_http_uv_conns_close was called */
    char host[LD_HTTP_HOST_MAX];
};

struct uv_conn {
    uv_tcp_t tcp;     /* data: the connection */
    uv_timer_t timer; /* data: the connection */
    uv_connect_t connect;
    uv_write_t write;
    ld_http_uv_conns *set;
    uv_conn *next; /* on the idle list */
    ld_http_uv_done done;
    void *arg;
    bool reused;       /* it has carried a request before this one */
    bool writing;      /* its write's callback has not come yet */
    bool idling;       /* its request is over: idle once that callback comes */
    int handles;       /* tcp and timer, until both are closed */
    uint64_t deadline; /* its request's, on uv_hrtime's clock */
    ld_http_inbox in;
};

int ld_http_uv_conns_open(ld_http_uv_conns **out, uv_loop_t *loop,
                          const struct sockaddr *addr, const char *host,
                          uint64_t timeout_ns)
{
    size_t len = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                             : sizeof(struct sockaddr_in);

    if (strlen(host) >= LD_HTTP_HOST_MAX ||
        (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
        return -EINVAL;
    ld_http_uv_conns *set = calloc(1, sizeof *set);
    if (!set)
        return -ENOMEM;
    set->loop = loop;
    memcpy(&set->addr, addr, len);
    strcpy(set->host, host);
    set->timeout_ns = ld_http_timeout(timeout_ns);
    *out = set;
    return 0;
}

/* The last connection of a closed set takes the set with it. */
static void conn_on_closed(uv_handle_t *h)
{
    uv_conn *c = h->data;
    ld_http_uv_conns *set = c->set;

    if (--c->handles != 0)
        return;
    ld_http_inbox_close(&c->in);
    free(c);
    if (--set->alive == 0 && set->closing)
        free(set);
}

static void conn_close(uv_conn *c)
{
    uv_close((uv_handle_t *)&c->tcp, conn_on_closed);
    uv_close((uv_handle_t *)&c->timer, conn_on_closed);
}

/* A kept-alive connection back on the idle list, or closed if the set is. */
static void conn_idle(uv_conn *c)
{
    ld_http_uv_conns *set = c->set;

    if (set->closing) {
        conn_close(c);
        return;
    }
    c->reused = true;
    c->next = set->idle;
    set->idle = c;
}

/* The request is over: the connection goes back to the idle list or away, then the
 * caller hears, and may start its next request on the very same connection. The reply
 * can come before libuv has called back for the request's write (the loop reads a
 * socket before it runs the callbacks of writes that finished at once), and that
 * write's request may not be reused until then: such a connection idles when it comes.
 * A callback that comes after the request (a write cancelled by the close) finds none. */
static void conn_finish(uv_conn *c, int rc, const ld_http_reply *reply)
{
    ld_http_uv_done done = c->done;
    void *arg = c->arg;

    c->done = NULL;
    uv_timer_stop(&c->timer);
    uv_read_stop((uv_stream_t *)&c->tcp);
    if (rc != 0 || !c->in.keep_alive)
        conn_close(c);
    else if (c->writing)
        c->idling = true;
    else
        conn_idle(c);
    done(arg, rc, rc == 0 ? reply : NULL);
}

/* A connection of the set's with its inbox and handle, not yet connected. */
static int conn_new(ld_http_uv_conns *set, uv_conn **out)
{
    uv_conn *c = calloc(1, sizeof *c);

    if (!c)
        return -ENOMEM;
    int rc = ld_http_inbox_open(&c->in);
    if (rc == 0)
        rc = uv_tcp_init(set->loop, &c->tcp);
    if (rc != 0) {
        ld_http_inbox_close(&c->in);
        free(c);
        return rc;
    }
    uv_timer_init(set->loop, &c->timer); /* fails for no reason on Linux */
    c->set = set;
    c->tcp.data = c->timer.data = c;
    c->handles = 2;
    set->alive++;
    *out = c;
    return 0;
}

static void conn_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    uv_conn *c = h->data;
    size_t room;

    (void)suggested;
    buf->base = ld_http_inbox_space(&c->in, &room);
    buf->len = room;
}

static void conn_fail(uv_conn *c, int rc);

static void conn_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    uv_conn *c = s->data;
    ld_http_reply reply;
    int rc;

    (void)buf;
    if (nread == 0)
        return;
    if (nread == UV_EOF) {
        rc = ld_http_inbox_end(&c->in, &reply);
    } else if (nread < 0) {
        rc = (int)nread;
    } else {
        ld_http_inbox_filled(&c->in, (size_t)nread);
        rc = ld_http_inbox_take(&c->in, &reply);
    }
    if (rc == 1)
        conn_finish(c, 0, &reply);
    else if (rc < 0)
        conn_fail(c, rc);
}

static void conn_on_write(uv_write_t *w, int status)
{
    uv_conn *c = w->handle->data;

    c->writing = false;
    if (c->idling) {
        c->idling = false;
        if (status == 0 && !uv_is_closing((uv_handle_t *)&c->tcp))
            conn_idle(c);
        else if (!uv_is_closing((uv_handle_t *)&c->tcp))
            conn_close(c);
    } else if (status != 0 && c->done) {
        conn_fail(c, status);
    }
}

/* Write the request and read for its reply. */
static int conn_send(uv_conn *c)
{
    uv_buf_t buf = uv_buf_init(c->in.req, (unsigned)c->in.req_len);
    int rc = uv_write(&c->write, (uv_stream_t *)&c->tcp, &buf, 1, conn_on_write);

    c->writing = rc == 0;
    if (rc == 0)
        rc = uv_read_start((uv_stream_t *)&c->tcp, conn_on_alloc, conn_on_read);
    return rc;
}

/* The request's deadline passed: it fails, and its connection closes (cancelling a
 * connect or a write under way, whose callbacks then find no request). */
static void conn_on_deadline(uv_timer_t *t)
{
    uv_conn *c = t->data;

    if (c->done)
        conn_finish(c, -ETIMEDOUT, NULL);
}

/* Fail the request at its deadline. */
static int conn_arm(uv_conn *c)
{
    uint64_t ms = (ld_http_left(c->deadline) + 999999u) / 1000000u;
    return uv_timer_start(&c->timer, conn_on_deadline, ms, 0);
}

static void conn_on_connect(uv_connect_t *r, int status)
{
    uv_conn *c = r->handle->data;

    if (!c->done)
        return;
    if (status == 0)
        status = uv_tcp_nodelay(&c->tcp, 1);
    if (status == 0)
        status = conn_send(c);
    if (status != 0)
        conn_finish(c, status, NULL);
}

static int conn_connect(uv_conn *c)
{
    return uv_tcp_connect(&c->connect, &c->tcp, (struct sockaddr *)&c->set->addr,
                          conn_on_connect);
}

/* A request that failed on a connection the server had closed while it was idle goes
 * again, once, on a new connection; any other failure ends it. */
static void conn_fail(uv_conn *c, int rc)
{
    uv_conn *fresh;

    if (!c->reused || !ld_http_inbox_stale(&c->in, rc) || conn_new(c->set, &fresh) != 0) {
        conn_finish(c, rc, NULL);
        return;
    }
    memcpy(fresh->in.req, c->in.req, c->in.req_len);
    fresh->in.req_len = c->in.req_len;
    fresh->done = c->done;
    fresh->arg = c->arg;
    fresh->deadline = c->deadline;
    c->done = NULL;
    uv_timer_stop(&c->timer);
    conn_close(c);
    rc = conn_connect(fresh);
    if (rc == 0)
        rc = conn_arm(fresh);
    if (rc != 0)
        conn_finish(fresh, rc, NULL);
}

/* An idle connection sends at once; a new one once it is connected. */
int ld_http_uv_get(ld_http_uv_conns *set, const char *target, ld_http_uv_done done,
                   void *arg)
{
    uv_conn *c = set->idle;
    int fresh = c == NULL;
    int rc = fresh ? conn_new(set, &c) : 0;

    if (rc != 0)
        return rc;
    if (!fresh)
        set->idle = c->next;
    rc = ld_http_inbox_request(&c->in, target, set->host);
    if (rc == 0)
        rc = fresh ? conn_connect(c) : conn_send(c);
    if (rc != 0) {
        conn_close(c);
        return rc;
    }
    c->done = done;
    c->arg = arg;
    c->deadline = uv_hrtime() + set->timeout_ns;
    rc = conn_arm(c);
    if (rc != 0) {
        c->done = NULL;
        conn_close(c);
    }
    return rc;
}

void ld_http_uv_conns_close(ld_http_uv_conns *set)
{
    if (!set)
        return;
    set->closing = true;
    while (set->idle) {
        uv_conn *c = set->idle;
        set->idle = c->next;
        conn_close(c);
    }
    if (set->alive == 0)
        free(set);
}
