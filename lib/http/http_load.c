/* http_load.c: the closed-loop generator of http_load.h.
 *
 * Each thread owns a uv_loop and its share of the connections. A connection is a small
 * state machine: connect (again after a pause when that fails), then write the shared
 * request and read its response, over and over, reading all the time so that no
 * request pays for a read_start. A write goes out with uv_try_write, which a request
 * of a few hundred bytes always fits on a socket that has room, and falls back to
 * uv_write for what is left. Responses are parsed with http.h's parser into one read
 * buffer per thread, latencies into a hist.h histogram per thread. A sweep timer finds
 * requests past their timeout; a stop timer ends the sending, then bounds the drain.
 */
#include "http_load.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <uv.h>

#include "hist.h"
#include "http.h"

#define LOAD_READ_BUF 65536
#define LOAD_BODY_MAX (1u << 20)
#define LOAD_SWEEP_MS 100
#define LOAD_RETRY_MS 10 /* the first pause after a failed connect, doubled each try */
#define LOAD_DEFAULT_TIMEOUT_S 10.0
#define LOAD_DRAIN_SLACK_NS 5000000000ull

typedef struct load_thread load_thread;

enum conn_state {
    C_CONNECTING, /* a connect is under way */
    C_OPEN,       /* connected: a request in flight, or about to be sent */
    C_CLOSING,    /* its socket is being closed */
    C_PAUSED,     /* waiting to connect again */
    C_DONE,       /* ended for good */
};

typedef struct load_conn {
    uv_tcp_t tcp;     /* data: the connection */
    uv_timer_t pause; /* data: the connection */
    uv_connect_t connect;
    uv_write_t write;
    load_thread *t;
    ld_http_response_parser *parser;
    uint64_t sent_ns; /* the request in flight's write; 0 when none */
    unsigned tries;   /* connects failed in a row */
    enum conn_state state;
    bool writing; /* write's callback has not come yet */
    bool idling;  /* the response came first: send the next once that callback comes */
} load_conn;

struct load_thread {
    uv_loop_t loop;
    pthread_t thread;
    uv_timer_t stop, sweep;
    const char *req;
    size_t req_len;
    struct sockaddr_storage addr;
    uint64_t end_ns, timeout_ns, drain_ns; /* drain_ns 0: the longest latency + slack */
    load_conn *conns;
    size_t nconns, live; /* live: not yet C_DONE */
    bool running;        /* still sending */
    int rc;
    ld_http_load_report r;
    uint64_t first_ns, last_ns;
    ld_hist hist; /* latencies in ns */
    char buf[LOAD_READ_BUF];
};

/* --- A connection ------------------------------------------------------------------ */

static void conn_connect(load_conn *c);
static void conn_drop(load_conn *c);

/* Nothing more for this connection; the loop ends with the last one. */
static void conn_end(load_conn *c)
{
    load_thread *t = c->t;

    c->state = C_DONE;
    if (--t->live > 0)
        return;
    uv_close((uv_handle_t *)&t->stop, NULL);
    uv_close((uv_handle_t *)&t->sweep, NULL);
    for (size_t i = 0; i < t->nconns; i++)
        uv_close((uv_handle_t *)&t->conns[i].pause, NULL);
}

static void conn_on_pause(uv_timer_t *h)
{
    conn_connect(h->data);
}

/* The socket is closed: connect again while the run lasts, at once after a dropped
 * connection, after a doubling pause after a failed connect, not at all once the
 * tries are spent. */
static void conn_on_closed(uv_handle_t *h)
{
    load_conn *c = h->data;
    load_thread *t = c->t;

    if (!t->running || c->tries >= LD_LOAD_CONNECT_TRIES) {
        conn_end(c);
    } else if (c->tries > 0) {
        c->state = C_PAUSED;
        uv_timer_start(&c->pause, conn_on_pause,
                       (uint64_t)LOAD_RETRY_MS << (c->tries - 1), 0);
    } else {
        conn_connect(c);
    }
}

/* Close the socket, whatever it is doing; a request in flight is forgotten. */
static void conn_drop(load_conn *c)
{
    if (c->state == C_CLOSING || c->state == C_DONE || c->state == C_PAUSED)
        return;
    c->state = C_CLOSING;
    c->sent_ns = 0;
    uv_close((uv_handle_t *)&c->tcp, conn_on_closed);
}

/* An error on the connection, counted in its class, ends it. */
static void conn_error(load_conn *c, int rc)
{
    ld_http_load_report *r = &c->t->r;

    if (rc == UV_ECONNRESET || rc == UV_EPIPE)
        r->resets++;
    else
        r->read_errors++;
    conn_drop(c);
}

static void conn_send(load_conn *c);

/* The write is libuv's no more: the next request, held back for it, may go now. */
static void conn_on_write(uv_write_t *w, int status)
{
    load_conn *c = w->data;
    bool idling = c->idling;

    c->writing = c->idling = false;
    if (status < 0 && status != UV_ECANCELED && c->state == C_OPEN)
        conn_error(c, status);
    else if (status == 0 && idling && c->state == C_OPEN)
        conn_send(c);
}

/* Send the request, or end the connection when the run is over. */
static void conn_send(load_conn *c)
{
    load_thread *t = c->t;

    if (!t->running) {
        conn_drop(c);
        return;
    }
    c->sent_ns = uv_hrtime();
    if (t->first_ns == 0)
        t->first_ns = c->sent_ns;
    uv_buf_t buf = uv_buf_init((char *)t->req, (unsigned)t->req_len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &buf, 1);
    if (n == (int)t->req_len)
        return;
    if (n < 0 && n != UV_EAGAIN) {
        conn_error(c, n);
        return;
    }
    if (n > 0)
        buf = uv_buf_init((char *)t->req + n, (unsigned)(t->req_len - (size_t)n));
    c->write.data = c;
    int rc = uv_write(&c->write, (uv_stream_t *)&c->tcp, &buf, 1, conn_on_write);
    c->writing = rc == 0;
    if (rc != 0)
        conn_error(c, rc);
}

/* A response read whole: count it, then the next request, or a new connection when
 * this one cannot carry it. The response can come before libuv has called back for
 * the request's write (the loop reads a socket before it runs the callbacks of writes
 * that finished), and c->write may not be reused until then: the next request waits
 * for that callback. */
static void conn_response(load_conn *c, const ld_http_response *res)
{
    load_thread *t = c->t;
    uint64_t now = uv_hrtime();
    uint64_t ns = now - c->sent_ns;

    t->r.requests++;
    ld_hist_add(&t->hist, ns);
    t->last_ns = now;
    if (res->status < 200 || res->status > 299)
        t->r.non_2xx++;
    c->sent_ns = 0;
    if (!res->keep_alive)
        conn_drop(c);
    else if (c->writing)
        c->idling = true;
    else
        conn_send(c);
}

static void conn_on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    load_conn *c = h->data;

    (void)suggested;
    *buf = uv_buf_init(c->t->buf, sizeof c->t->buf);
}

/* Feed what came to the parser; a response ends with its bytes, and none should come
 * after it, since the next request is not sent yet. */
static void conn_feed(load_conn *c, const char *data, size_t len)
{
    while (len > 0 && c->state == C_OPEN) {
        ld_http_response res;
        size_t used;
        int rc = ld_http_response_feed(c->parser, data, len, &used, &res);
        if (rc < 0 || (rc == 1 && c->sent_ns == 0)) {
            conn_error(c, rc < 0 ? rc : -EPROTO);
            return;
        }
        if (rc == 1)
            conn_response(c, &res);
        data += used;
        len -= used;
    }
}

/* The server ended the connection: a response that ends with it counts, one cut off
 * is a read error, and a connection with nothing in flight just goes. */
static void conn_on_eof(load_conn *c)
{
    ld_http_response res;
    int rc = ld_http_response_end(c->parser, &res);

    if (rc == 1 && c->sent_ns != 0) {
        res.keep_alive = 0;
        conn_response(c, &res);
    } else if (rc < 0 || c->sent_ns != 0) {
        conn_error(c, -EPROTO);
    } else {
        conn_drop(c);
    }
}

static void conn_on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    load_conn *c = s->data;

    if (c->state != C_OPEN)
        return;
    if (nread > 0)
        conn_feed(c, buf->base, (size_t)nread);
    else if (nread == UV_EOF)
        conn_on_eof(c);
    else if (nread < 0)
        conn_error(c, (int)nread);
}

static void conn_on_connect(uv_connect_t *req, int status)
{
    load_conn *c = req->data;

    if (status == UV_ECANCELED || c->state != C_CONNECTING)
        return;
    if (status == 0)
        status = uv_tcp_nodelay(&c->tcp, 1);
    if (status == 0)
        status = uv_read_start((uv_stream_t *)&c->tcp, conn_on_alloc, conn_on_read);
    if (status != 0) {
        c->t->r.connect_errors++;
        c->tries++;
        conn_drop(c);
        return;
    }
    c->tries = 0;
    c->t->r.connected++;
    c->state = C_OPEN;
    conn_send(c);
}

/* A new socket, a fresh parser, and a connect; a failure to start one counts as a
 * failed connect. */
static void conn_connect(load_conn *c)
{
    load_thread *t = c->t;

    if (!t->running) {
        conn_end(c);
        return;
    }
    ld_http_response_parser_free(c->parser);
    c->parser = NULL;
    int rc = ld_http_response_parser_open(&c->parser, LOAD_BODY_MAX);
    if (rc == 0)
        rc = uv_tcp_init(&t->loop, &c->tcp);
    if (rc != 0) {
        t->r.connect_errors++;
        conn_end(c);
        return;
    }
    c->tcp.data = c;
    c->state = C_CONNECTING;
    c->connect.data = c;
    rc = uv_tcp_connect(&c->connect, &c->tcp, (struct sockaddr *)&t->addr,
                        conn_on_connect);
    if (rc != 0) {
        t->r.connect_errors++;
        c->tries++;
        conn_drop(c);
    }
}

/* --- A thread ---------------------------------------------------------------------- */

/* The drain is over: whatever is still unanswered is a timeout. */
static void thread_on_drained(uv_timer_t *h)
{
    load_thread *t = h->data;

    for (size_t i = 0; i < t->nconns; i++) {
        load_conn *c = &t->conns[i];
        if (c->sent_ns != 0)
            t->r.timeouts++;
        conn_drop(c);
    }
}

/* The sending is over: connections with nothing in flight end now, the others with
 * their response, within the drain. */
static void thread_on_stop(uv_timer_t *h)
{
    load_thread *t = h->data;
    uint64_t drain =
        t->drain_ns ? t->drain_ns : ld_hist_max(&t->hist) + LOAD_DRAIN_SLACK_NS;

    t->running = false;
    for (size_t i = 0; i < t->nconns; i++) {
        load_conn *c = &t->conns[i];
        if (c->state == C_PAUSED) {
            uv_timer_stop(&c->pause);
            conn_end(c);
        } else if (c->sent_ns == 0) {
            conn_drop(c);
        }
    }
    if (t->live > 0)
        uv_timer_start(&t->stop, thread_on_drained, (drain + 999999) / 1000000, 0);
}

/* Requests past their timeout: counted, and their connections opened again. */
static void thread_on_sweep(uv_timer_t *h)
{
    load_thread *t = h->data;
    uint64_t now = uv_hrtime();

    for (size_t i = 0; i < t->nconns; i++) {
        load_conn *c = &t->conns[i];
        if (c->sent_ns != 0 && now - c->sent_ns > t->timeout_ns) {
            t->r.timeouts++;
            conn_drop(c);
        }
    }
}

/* The loop, its timers and its connections' pause timers, then every connect. */
static int thread_setup(load_thread *t)
{
    int rc = uv_loop_init(&t->loop);

    if (rc != 0)
        return rc;
    uv_timer_init(&t->loop, &t->stop);
    uv_timer_init(&t->loop, &t->sweep);
    t->stop.data = t->sweep.data = t;
    for (size_t i = 0; i < t->nconns; i++) {
        load_conn *c = &t->conns[i];
        c->t = t;
        uv_timer_init(&t->loop, &c->pause);
        c->pause.data = c;
    }
    return 0;
}

static void *thread_main(void *arg)
{
    load_thread *t = arg;
    uint64_t now = uv_hrtime();
    uint64_t left_ms = t->end_ns > now ? (t->end_ns - now + 999999) / 1000000 : 0;

    t->running = true;
    t->live = t->nconns;
    uv_timer_start(&t->stop, thread_on_stop, left_ms, 0);
    uv_timer_start(&t->sweep, thread_on_sweep, LOAD_SWEEP_MS, LOAD_SWEEP_MS);
    for (size_t i = 0; i < t->nconns; i++)
        conn_connect(&t->conns[i]);
    uv_run(&t->loop, UV_RUN_DEFAULT);
    for (size_t i = 0; i < t->nconns; i++)
        ld_http_response_parser_free(t->conns[i].parser);
    t->rc = uv_loop_close(&t->loop);
    return NULL;
}

/* --- A run ------------------------------------------------------------------------- */

static bool config_ok(const ld_http_load_config *cfg)
{
    return cfg->addr &&
           (cfg->addr->sa_family == AF_INET || cfg->addr->sa_family == AF_INET6) &&
           cfg->threads >= 1 && cfg->connections >= cfg->threads && cfg->seconds >= 0 &&
           cfg->seconds <= 1e6 && cfg->timeout_s >= 0 && cfg->timeout_s <= 1e6 &&
           cfg->drain_s >= 0 && cfg->drain_s <= 1e6;
}

/* The one request every connection sends, formatted once. */
static int format_request(const ld_http_load_config *cfg, char **out, size_t *len)
{
    int n = ld_http_format_request(NULL, 0, "GET", cfg->path, cfg->host, NULL, NULL, 0);

    if (n < 0)
        return n;
    *out = malloc((size_t)n + 1);
    if (!*out)
        return -ENOMEM;
    ld_http_format_request(*out, (size_t)n + 1, "GET", cfg->path, cfg->host, NULL, NULL,
                           0);
    *len = (size_t)n;
    return 0;
}

/* One thread's counts into the run's. */
static void report_add(ld_http_load_report *sum, ld_hist *hist, const load_thread *t,
                       uint64_t *first, uint64_t *last)
{
    const ld_http_load_report *r = &t->r;

    sum->requests += r->requests;
    sum->connect_errors += r->connect_errors;
    sum->read_errors += r->read_errors;
    sum->resets += r->resets;
    sum->non_2xx += r->non_2xx;
    sum->timeouts += r->timeouts;
    sum->connected += r->connected;
    ld_hist_merge(hist, &t->hist);
    if (t->first_ns && (*first == 0 || t->first_ns < *first))
        *first = t->first_ns;
    if (t->last_ns > *last)
        *last = t->last_ns;
}

/* The totals, the window and the percentiles of every thread's counts. */
static int report(load_thread *ts, unsigned n, ld_http_load_report *out)
{
    ld_hist *hist = calloc(1, sizeof *hist);
    uint64_t first = 0, last = 0;

    if (!hist)
        return -ENOMEM;
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < n; i++)
        report_add(out, hist, &ts[i], &first, &last);
    out->errors = out->connect_errors + out->read_errors + out->resets + out->non_2xx +
                  out->timeouts;
    out->seconds = last > first ? (double)(last - first) / 1e9 : 0;
    out->p50_ns = (int64_t)ld_hist_quantile(hist, 0.50);
    out->p90_ns = (int64_t)ld_hist_quantile(hist, 0.90);
    out->p99_ns = (int64_t)ld_hist_quantile(hist, 0.99);
    out->max_ns = (int64_t)ld_hist_max(hist);
    free(hist);
    return 0;
}

/* Each thread its share of the connections and the run's settings. */
static void threads_init(load_thread *ts, load_conn *conns,
                         const ld_http_load_config *cfg, const char *req, size_t req_len)
{
    uint64_t end = uv_hrtime() + (uint64_t)(cfg->seconds * 1e9);
    double timeout = cfg->timeout_s > 0 ? cfg->timeout_s : LOAD_DEFAULT_TIMEOUT_S;
    size_t at = 0;

    for (unsigned i = 0; i < cfg->threads; i++) {
        load_thread *t = &ts[i];
        t->nconns =
            cfg->connections / cfg->threads + (i < cfg->connections % cfg->threads);
        t->conns = conns + at;
        at += t->nconns;
        t->req = req;
        t->req_len = req_len;
        memcpy(&t->addr, cfg->addr,
               cfg->addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                : sizeof(struct sockaddr_in));
        t->end_ns = end;
        t->timeout_ns = (uint64_t)(timeout * 1e9);
        t->drain_ns = (uint64_t)(cfg->drain_s * 1e9);
    }
}

/* Start every thread, then join those started; the first error wins. */
static int threads_run(load_thread *ts, unsigned n)
{
    unsigned started = 0;
    int rc = 0;

    for (; started < n && rc == 0; started++) {
        rc = thread_setup(&ts[started]);
        if (rc == 0)
            rc = -pthread_create(&ts[started].thread, NULL, thread_main, &ts[started]);
        if (rc != 0)
            break;
    }
    for (unsigned i = 0; i < started; i++) {
        pthread_join(ts[i].thread, NULL);
        if (rc == 0)
            rc = ts[i].rc;
    }
    return rc;
}

int ld_http_load_run(const ld_http_load_config *cfg, ld_http_load_report *out)
{
    char *req = NULL;
    size_t req_len = 0;

    if (!config_ok(cfg))
        return -EINVAL;
    int rc = format_request(cfg, &req, &req_len);
    if (rc != 0)
        return rc;
    load_thread *ts = calloc(cfg->threads, sizeof *ts);
    load_conn *conns = calloc(cfg->connections, sizeof *conns);
    if (!ts || !conns) {
        rc = -ENOMEM;
    } else {
        threads_init(ts, conns, cfg, req, req_len);
        rc = threads_run(ts, cfg->threads);
        if (rc == 0)
            rc = report(ts, cfg->threads, out);
    }
    free(conns);
    free(ts);
    free(req);
    return rc;
}

int ld_http_load_fd_room(uint64_t connections, uint64_t *soft, uint64_t *hard)
{
    struct rlimit lim;

    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return -errno;
    if (lim.rlim_cur < lim.rlim_max) {
        struct rlimit raised = {.rlim_cur = lim.rlim_max, .rlim_max = lim.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            lim = raised;
    }
    *soft = lim.rlim_cur;
    *hard = lim.rlim_max;
    return connections + LD_LOAD_SPARE_FDS <= lim.rlim_cur ? 0 : -EMFILE;
}
