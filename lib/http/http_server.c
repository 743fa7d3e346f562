/* http_server.c: HTTP/1.1 connections on a uv_loop, within the bounds of http.h.
 *
 * A connection feeds what it reads to its reader (http_request.h) and queues each
 * request the reader yields, in order, before handing it to the handler. An answer
 * marks its request answered; the queue's answered head is then written, so responses
 * leave in request order. A request stays queued until its write is handed to libuv,
 * which owns it from then on and frees it in the write callback.
 *
 * A connection ends in one of two ways. Gracefully: once it carries no more requests
 * (the client asked, a limit, a refusal, its end of stream), the last response is
 * written, the write side shut down, and what the client still sends is read and
 * dropped for a moment (a linger), so that closing does not reset the connection under
 * responses the client has not read yet. Or at once (an error, a timeout, the server
 * closing): the requests the handler holds are orphaned (their conn set to NULL, their
 * body freed) and the rest freed.
 *
 * Every request read counts towards the server's `held` until it is freed: written,
 * dropped, or, for an orphan, answered. An orphan holds a reference on the server, so
 * that it can uncount itself whenever the handler answers it.
 *
 * The timer runs whenever the handler holds none of the connection's requests; see
 * request_timeout_ms in http.h.
 */
#include "http.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_request.h"

#define HTTP_READ_BYTES 65536 /* one read, all parsed before the next */
/* A settle run connects once per check in flight, thousands at once: a queue of 511,
 * as nginx and Redis listen, dropped up to 1,427 connects of 8,000, each then retried
 * after a second. The kernel caps it at net.core.somaxconn (4096 by default). */
#define HTTP_BACKLOG 4096
#define HTTP_LINGER_MS 1000u /* the most a closing connection reads and drops */

typedef struct ld_http_conn http_conn;

struct ld_http_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    ld_http_limits limits;
    ld_http_handler handler;
    void *ctx;
    http_conn *conns; /* open, not closing */
    ld_http_server_stats stats;
    unsigned refs; /* the listener, each connection and each turned away, until closed */
    bool closing;
    char buf[HTTP_READ_BYTES]; /* every read lands here: one loop thread, one read */
};

struct ld_http_conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_shutdown_t shutdown;
    ld_http_server *server;
    http_conn *prev, *next; /* in server->conns */
    ld_http_reader reader;
    ld_http_request *head, *tail; /* read, and not yet handed to libuv to write */
    uint32_t held;                /* read and not yet written: queued or writing */
    uint32_t unanswered;          /* with the handler */
    uint32_t requests;            /* read on this connection */
    char *stash; /* bytes read while the pipeline was full, from stash_off unparsed */
    size_t stash_len, stash_off;
    int handles; /* tcp and timer, until both are closed */
    bool paused; /* reading stopped until the pipeline has room */
    bool last;   /* no more requests: end once the queue is written */
    bool ending; /* the write side is shut down, or being shut down */
    bool closing;
};

/* A connection turned away at the bound: its 503, its shutdown, its close. */
typedef struct http_turned_away {
    uv_tcp_t tcp;
    uv_shutdown_t shutdown;
    ld_http_server *server;
} http_turned_away;

static void server_unref(ld_http_server *s)
{
    if (--s->refs == 0)
        free(s);
}

/* --- Closing --------------------------------------------------------------------- */

/* A request the server held is gone. */
static void request_drop(ld_http_server *s, ld_http_request *req)
{
    s->stats.held_body_bytes -= req->body_cap;
    ld_http_request_free(req);
    s->stats.held--;
}

/* req's connection closes while the handler holds it: only what the handler reads
 * stays, and it keeps the server until answered. */
static void request_orphan(ld_http_server *s, ld_http_request *req)
{
    req->conn = NULL;
    req->server = s;
    s->stats.held_body_bytes -= req->body_cap;
    free(req->body);
    req->body = NULL;
    req->body_len = req->body_cap = 0;
    s->refs++;
    s->stats.orphaned++;
}

static void on_conn_closed(uv_handle_t *h)
{
    http_conn *c = h->data;

    if (--c->handles != 0)
        return;
    ld_http_server *s = c->server;
    s->stats.open--;
    free(c);
    server_unref(s);
}

/* Close now. Requests being written are freed by their write callbacks, which libuv
 * runs (cancelled) before the close callbacks. */
static void conn_close(http_conn *c)
{
    ld_http_server *s = c->server;

    if (c->closing)
        return;
    c->closing = true;
    ld_http_reader_fini(&c->reader);
    for (ld_http_request *req = c->head, *next; req; req = next) {
        next = req->next;
        if (req->state == LD_HTTP_HELD)
            request_orphan(s, req);
        else
            request_drop(s, req);
    }
    c->head = c->tail = NULL;
    free(c->stash);
    c->stash = NULL;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
}

static void on_timer(uv_timer_t *t);

/* The server waits on the client again: start the clock. */
static void conn_wait(http_conn *c)
{
    if (!c->closing && !c->ending && c->unanswered == 0)
        uv_timer_start(&c->timer, on_timer, c->server->limits.request_timeout_ms, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* The write side is shut down: linger, reading and dropping, until the client closes
 * or the linger ends. */
static void on_shutdown(uv_shutdown_t *sd, int status)
{
    http_conn *c = sd->data;
    uint32_t linger = c->server->limits.request_timeout_ms;

    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_timer, linger < HTTP_LINGER_MS ? linger : HTTP_LINGER_MS,
                   0);
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
        conn_close(c);
}

/* No more requests on this connection: stop reading them. */
static void conn_last(http_conn *c)
{
    c->last = true;
    uv_read_stop((uv_stream_t *)&c->tcp);
}

/* --- Writing --------------------------------------------------------------------- */

static void conn_resume(http_conn *c);

static void on_written(uv_write_t *w, int status)
{
    ld_http_request *req = w->data;
    http_conn *c = req->conn;

    request_drop(c->server, req);
    c->held--;
    if (c->closing)
        return;
    if (status < 0)
        conn_close(c);
    else
        conn_resume(c);
}

/* Hand libuv the answered head of the queue, in order; once a last connection's queue
 * is empty, shut its write side down behind them. */
static void conn_flush(http_conn *c)
{
    while (!c->closing && c->head && c->head->state == LD_HTTP_ANSWERED) {
        ld_http_request *req = c->head;
        c->head = req->next;
        if (!c->head)
            c->tail = NULL;
        req->state = LD_HTTP_WRITING;
        req->write.data = req;
        uv_buf_t b = uv_buf_init(req->out, (unsigned)req->out_len);
        if (uv_write(&req->write, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0) {
            request_drop(c->server, req);
            c->held--;
            conn_close(c);
        }
    }
    if (c->closing || !c->last || c->head || c->ending)
        return;
    c->ending = true;
    uv_timer_start(&c->timer, on_timer, c->server->limits.request_timeout_ms, 0);
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        conn_close(c);
}

/* A response's head into buf[0..size), as snprintf does: buf NULL and size 0 measure
 * it, which C allows and cppcheck does not see. */
static int response_head(char *buf, size_t size, int status, const char *headers,
                         const char *length, const char *connection)
{
    // cppcheck-suppress nullPointer
    return snprintf(buf, size, "HTTP/1.1 %d %s\r\n%s%s%s\r\n", status,
                    ld_http_reason(status), headers, length, connection);
}

/* The status line, the caller's headers, Content-Length (none for 204, which has no
 * body), Connection, and the body (none for HEAD), in one buffer for one write. */
static int response_build(ld_http_request *req, int status, const char *headers,
                          const void *body, size_t len)
{
    const char *connection = !req->keep_alive ? "Connection: close\r\n"
                             : req->http_1_0  ? "Connection: keep-alive\r\n"
                                              : "";
    char length[48] = "";

    len = status == 204 ? 0 : len;
    if (status != 204)
        snprintf(length, sizeof length, "Content-Length: %zu\r\n", len);
    size_t send = req->method == HTTP_HEAD ? 0 : len;
    headers = headers ? headers : "";
    int head = response_head(NULL, 0, status, headers, length, connection);
    if (head < 0)
        return -EINVAL;
    req->out = malloc((size_t)head + 1 + send);
    if (!req->out)
        return -ENOMEM;
    response_head(req->out, (size_t)head + 1, status, headers, length, connection);
    if (send)
        memcpy(req->out + head, body, send);
    req->out_len = (size_t)head + send;
    return 0;
}

int ld_http_respond(ld_http_request *req, int status, const char *headers,
                    const void *body, size_t len)
{
    static const char invalid[] = "the handler gave an invalid status\n";
    http_conn *c = req->conn;
    int rc = 0;

    if (!c) {
        ld_http_server *s = req->server;
        request_drop(s, req);
        server_unref(s);
        return -ECONNRESET;
    }
    if (status < 200 || status > 599) {
        status = 500;
        headers = NULL;
        body = invalid;
        len = sizeof invalid - 1;
        rc = -EINVAL;
    }
    req->state = LD_HTTP_ANSWERED;
    c->unanswered--;
    if (response_build(req, status, headers, body, len) != 0) {
        conn_close(c);
        return -ENOMEM;
    }
    conn_flush(c);
    conn_wait(c);
    return rc;
}

int ld_http_request_orphaned(const ld_http_request *req)
{
    return req->conn == NULL;
}

/* --- Reading --------------------------------------------------------------------- */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    http_conn *c = h->data;

    (void)suggested;
    *buf = uv_buf_init(c->server->buf, sizeof c->server->buf);
}

/* req is the handler's to answer now, after those before it: the clock stops. */
static void conn_enqueue(http_conn *c, ld_http_request *req)
{
    req->conn = c;
    req->state = LD_HTTP_HELD;
    if (c->tail)
        c->tail->next = req;
    else
        c->head = req;
    c->tail = req;
    c->held++;
    c->server->stats.held++;
    c->server->stats.held_body_bytes += req->body_cap;
    c->unanswered++;
    uv_timer_stop(&c->timer);
}

static void conn_refuse(http_conn *c, int status);

/* Whether the server may hold req too, under its bounds on requests held and their
 * bodies. */
static bool server_has_room(const ld_http_server *s, const ld_http_request *req)
{
    return s->stats.held < s->limits.held &&
           (req->body_cap == 0 ||
            s->stats.held_body_bytes + req->body_cap <= s->limits.held_body_bytes);
}

/* Queue req and hand it to the handler, which may answer it, or close the server,
 * before it returns; past the server's bounds on what it holds, refuse it with 503
 * instead. */
static void conn_dispatch(http_conn *c, ld_http_request *req)
{
    ld_http_server *s = c->server;

    if (!server_has_room(s, req)) {
        ld_http_request_free(req);
        conn_refuse(c, 503);
        return;
    }
    s->stats.requests++;
    conn_enqueue(c, req);
    if (++c->requests >= s->limits.requests)
        req->keep_alive = false;
    if (!req->keep_alive)
        conn_last(c);
    s->handler(req, s->ctx);
}

/* Answer status after the requests before it, with its reason as the body, and end the
 * connection: a request the bounds refuse. */
static void conn_refuse(http_conn *c, int status)
{
    ld_http_server_stats *st = &c->server->stats;
    char body[64];
    ld_http_request *req = calloc(1, sizeof *req);

    st->bad_request += status == 400;
    st->timed_out += status == 408;
    st->body_too_large += status == 413;
    st->headers_too_large += status == 431;
    st->unavailable += status == 503;
    st->bad_version += status == 505;
    ld_http_reader_fini(&c->reader);
    conn_last(c);
    if (!req) {
        conn_close(c);
        return;
    }
    conn_enqueue(c, req);
    int len = snprintf(body, sizeof body, "%s\n", ld_http_reason(status));
    ld_http_respond(req, status, "Content-Type: text/plain\r\n", body, (size_t)len);
}

/* Feed data to the reader, one request at a time, while the connection takes more;
 * when the pipeline is full, stop reading. Returns the bytes it took: all of them,
 * unless the pipeline filled (those after a last request are dropped). */
static size_t conn_parse(http_conn *c, const char *data, size_t len)
{
    uint32_t pipeline = c->server->limits.pipeline;
    size_t used = 0;

    while (!c->closing && !c->last && used < len && c->held < pipeline) {
        ld_http_request *req;
        used += ld_http_reader_feed(&c->reader, data + used, len - used, &req);
        if (req)
            conn_dispatch(c, req);
        else if (ld_http_reader_refusal(&c->reader))
            conn_refuse(c, ld_http_reader_refusal(&c->reader));
    }
    if (c->closing || c->last)
        return len;
    if (c->held >= pipeline && !c->paused) {
        c->paused = true;
        uv_read_stop((uv_stream_t *)&c->tcp);
    }
    return used;
}

/* What a read leaves unparsed behind a full pipeline waits here for room. */
static void conn_stash(http_conn *c, const char *data, size_t len)
{
    c->stash = malloc(len);
    if (!c->stash) {
        conn_close(c);
        return;
    }
    memcpy(c->stash, data, len);
    c->stash_len = len;
    c->stash_off = 0;
}

/* A write is done: if the pipeline has room again, parse what was kept, then read. */
static void conn_resume(http_conn *c)
{
    if (!c->paused || c->last || c->held >= c->server->limits.pipeline)
        return;
    c->paused = false;
    if (c->stash) {
        c->stash_off +=
            conn_parse(c, c->stash + c->stash_off, c->stash_len - c->stash_off);
        if (c->closing || c->stash_off < c->stash_len)
            return;
        free(c->stash);
        c->stash = NULL;
    }
    if (!c->paused && !c->last &&
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0)
        conn_close(c);
}

/* The client's end of stream: answer what it has sent whole, then end; a request it
 * cut off gets no answer. */
static void conn_eof(http_conn *c)
{
    ld_http_reader_fini(&c->reader);
    conn_last(c);
    if (c->held == 0)
        conn_close(c);
    else
        conn_flush(c);
}

/* Bytes read: parse them, keeping what a full pipeline leaves. */
static void conn_read(http_conn *c, const char *data, size_t len)
{
    size_t used = conn_parse(c, data, len);

    if (used < len && !c->closing)
        conn_stash(c, data + used, len - used);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    http_conn *c = stream->data;

    if (nread == 0 || c->closing)
        return;
    if (c->ending) {
        if (nread < 0)
            conn_close(c);
        return;
    }
    if (nread == UV_EOF)
        conn_eof(c);
    else if (nread < 0)
        conn_close(c);
    else
        conn_read(c, buf->base, (size_t)nread);
}

/* The clock ran out: a linger or a write the client does not take ends now, a request
 * under way is cut off with 408, an idle connection closes. */
static void on_timer(uv_timer_t *t)
{
    http_conn *c = t->data;

    if (c->ending || c->last || !ld_http_reader_started(&c->reader))
        conn_close(c);
    else
        conn_refuse(c, 408);
}

/* --- Accepting ------------------------------------------------------------------- */

static void on_turned_away_closed(uv_handle_t *h)
{
    http_turned_away *t = h->data;
    ld_http_server *s = t->server;

    free(t);
    server_unref(s);
}

static void on_turned_away_shutdown(uv_shutdown_t *sd, int status)
{
    http_turned_away *t = sd->data;

    (void)status;
    uv_close((uv_handle_t *)&t->tcp, on_turned_away_closed);
}

/* Past the connection bound: accept, say 503 in one non-blocking write, and close. A
 * connection libuv hands over must be accepted, or it stops accepting any. */
static void turn_away(ld_http_server *s)
{
    static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
                               "Content-Type: text/plain\r\nContent-Length: 21\r\n"
                               "Connection: close\r\n\r\ntoo many connections\n";
    http_turned_away *t = malloc(sizeof *t);

    if (!t)
        return;
    t->server = s;
    t->tcp.data = t;
    t->shutdown.data = t;
    s->refs++;
    uv_tcp_init(s->loop, &t->tcp);
    if (uv_accept((uv_stream_t *)&s->listener, (uv_stream_t *)&t->tcp) == 0) {
        uv_buf_t b = uv_buf_init((char *)busy, sizeof busy - 1);
        s->stats.unavailable++;
        uv_try_write((uv_stream_t *)&t->tcp, &b, 1);
        if (uv_shutdown(&t->shutdown, (uv_stream_t *)&t->tcp, on_turned_away_shutdown) ==
            0)
            return;
    }
    uv_close((uv_handle_t *)&t->tcp, on_turned_away_closed);
}

/* A connection opens with its timer running: the client owes a request. */
static void on_connection(uv_stream_t *listener, int status)
{
    ld_http_server *s = listener->data;

    if (status < 0 || s->closing)
        return;
    if (s->stats.open >= s->limits.connections) {
        turn_away(s);
        return;
    }
    http_conn *c = calloc(1, sizeof *c);
    if (!c) {
        turn_away(s);
        return;
    }
    c->server = s;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles = 2;
    s->refs++;
    s->stats.open++;
    ld_http_reader_init(&c->reader, &s->limits);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1); /* a response is one write: send it now */
    s->stats.accepted++;
    if (s->stats.open > s->stats.peak_open)
        s->stats.peak_open = s->stats.open;
    conn_wait(c);
}

/* --- The server ------------------------------------------------------------------ */

static void on_listener_closed(uv_handle_t *h)
{
    server_unref(h->data);
}

/* A listening socket bound to addr with SO_REUSEPORT, opened as t: servers on several
 * loops bind one port and the kernel spreads the connections among them. */
static int bind_shared(uv_tcp_t *t, const struct sockaddr *addr)
{
    socklen_t len = addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                : sizeof(struct sockaddr_in);
    int one = 1, rc = 0;
    int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0)
        return -errno;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, addr, len) != 0)
        rc = -errno;
    if (rc == 0)
        rc = uv_tcp_open(t, fd);
    if (rc != 0)
        close(fd);
    return rc;
}

static int server_open(ld_http_server **out, uv_loop_t *loop, const struct sockaddr *addr,
                       const ld_http_limits *limits, ld_http_handler handler, void *ctx,
                       bool shared)
{
    ld_http_server *s = calloc(1, sizeof *s);

    if (!s)
        return -ENOMEM;
    s->loop = loop;
    s->handler = handler;
    s->ctx = ctx;
    ld_http_limits_resolve(&s->limits, limits);
    int rc = uv_tcp_init(loop, &s->listener);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->listener.data = s;
    s->refs = 1;
    rc = shared ? bind_shared(&s->listener, addr) : uv_tcp_bind(&s->listener, addr, 0);
    if (rc == 0)
        rc = uv_listen((uv_stream_t *)&s->listener, HTTP_BACKLOG, on_connection);
    if (rc != 0) {
        uv_close((uv_handle_t *)&s->listener, on_listener_closed);
        return rc;
    }
    *out = s;
    return 0;
}

int ld_http_server_open(ld_http_server **out, uv_loop_t *loop,
                        const struct sockaddr *addr, const ld_http_limits *limits,
                        ld_http_handler handler, void *ctx)
{
    return server_open(out, loop, addr, limits, handler, ctx, false);
}

int ld_http_server_open_shared(ld_http_server **out, uv_loop_t *loop,
                               const struct sockaddr *addr, const ld_http_limits *limits,
                               ld_http_handler handler, void *ctx)
{
    return server_open(out, loop, addr, limits, handler, ctx, true);
}

int ld_http_server_port(const ld_http_server *s)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;

    if (uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len) != 0)
        return -EBADF;
    if (ss.ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((const struct sockaddr_in *)&ss)->sin_port);
}

void ld_http_server_stats_get(const ld_http_server *s, ld_http_server_stats *out)
{
    *out = s->stats;
}

void ld_http_server_close(ld_http_server *s)
{
    s->closing = true;
    while (s->conns)
        conn_close(s->conns);
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
}
