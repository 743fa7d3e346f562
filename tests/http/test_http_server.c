/* test_http_server.c: the HTTP server against well-behaved and hostile clients.
 *
 * Usage: test_http_server CASE. The server runs on a thread of its own, with a handler
 * that answers /now at once and /after?ms=N after N ms (a uv_timer): the body names
 * the method, path, query and body length, so a client can tell its answers apart.
 * After each case a fresh client must still be answered, and the server's stats must
 * say what the case did; under ASan the run must also leak nothing.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "client.h"
#include "http.h"
#include "pcg.h"

/* --- The server under test, on its own thread -------------------------------------- */

typedef struct test_server {
    uv_loop_t loop;
    uv_async_t stop;
    uv_sem_t ready;
    pthread_t thread;
    ld_http_server *server;
    ld_http_limits limits;
    int port, rc;
    int orphan_answers;         /* ld_http_respond said -ECONNRESET */
    size_t orphan_body_bytes;   /* the bodies those requests still had */
    int invalid_answers;        /* ld_http_respond said -EINVAL */
    ld_http_server_stats stats; /* at the stop */
} test_server;

typedef struct deferred {
    uv_timer_t timer;
    test_server *ts;
    ld_http_request *req;
} deferred;

static void answer(test_server *ts, ld_http_request *req)
{
    char body[512];
    size_t len;
    const char *path = ld_http_request_path(req);

    ld_http_request_body(req, &len);
    int n = snprintf(body, sizeof body, "%s %s %s body=%zu ", ld_http_request_method(req),
                     path, ld_http_request_query(req), len);
    int status = strcmp(path, "/bad-status") == 0 ? 99 : 200;
    int rc =
        ld_http_respond(req, status, "Content-Type: text/plain\r\n", body, (size_t)n);
    ts->orphan_answers += rc == -ECONNRESET;
    ts->orphan_body_bytes += rc == -ECONNRESET ? len : 0;
    ts->invalid_answers += rc == -EINVAL;
}

static void on_deferred_closed(uv_handle_t *h)
{
    free(h->data);
}

static void on_deferred(uv_timer_t *t)
{
    deferred *d = t->data;

    answer(d->ts, d->req);
    uv_close((uv_handle_t *)&d->timer, on_deferred_closed);
}

static void on_request(ld_http_request *req, void *ctx)
{
    test_server *ts = ctx;
    char ms[16];

    if (strcmp(ld_http_request_path(req), "/after") == 0 &&
        ld_http_query_get(ld_http_request_query(req), "ms", ms, sizeof ms) > 0) {
        deferred *d = calloc(1, sizeof *d);
        d->ts = ts;
        d->req = req;
        uv_timer_init(&ts->loop, &d->timer);
        d->timer.data = d;
        uv_timer_start(&d->timer, on_deferred, (uint64_t)atoi(ms), 0);
        return;
    }
    answer(ts, req);
}

/* Stop: the stats as they are, then close; pending /after timers still answer. */
static void on_stop(uv_async_t *a)
{
    test_server *ts = a->data;

    ld_http_server_stats_get(ts->server, &ts->stats);
    ld_http_server_close(ts->server);
    uv_close((uv_handle_t *)&ts->stop, NULL);
}

static void *server_main(void *arg)
{
    test_server *ts = arg;
    struct sockaddr_in a;

    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_loop_init(&ts->loop);
    uv_async_init(&ts->loop, &ts->stop, on_stop);
    ts->stop.data = ts;
    ts->rc = ld_http_server_open(&ts->server, &ts->loop, (struct sockaddr *)&a,
                                 &ts->limits, on_request, ts);
    if (ts->rc == 0)
        ts->port = ld_http_server_port(ts->server);
    else
        uv_close((uv_handle_t *)&ts->stop, NULL);
    uv_sem_post(&ts->ready);
    uv_run(&ts->loop, UV_RUN_DEFAULT);
    uv_loop_close(&ts->loop);
    return NULL;
}

static int server_start(test_server *ts)
{
    uv_sem_init(&ts->ready, 0);
    if (pthread_create(&ts->thread, NULL, server_main, ts) != 0)
        return -1;
    uv_sem_wait(&ts->ready);
    return ts->rc;
}

static void server_stop(test_server *ts)
{
    uv_async_send(&ts->stop);
    pthread_join(ts->thread, NULL);
    uv_sem_destroy(&ts->ready);
}

/* --- Helpers ------------------------------------------------------------------------ */

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* One GET on a fresh connection, answered 200: the server still serves. A connection
 * refused at the bound (503) is retried while the server notices closed ones. */
static int served(int port)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        test_conn c;
        int ok = test_connect(&c, port) == 0 && test_get(&c, "/now?fresh", NULL) == 0 &&
                 test_response(&c) == 1;
        int status = ok ? c.status : 0;
        test_close(&c, 0);
        if (status == 200)
            return 1;
        if (status != 503)
            return 0;
        sleep_ms(20);
    }
    return 0;
}

/* A request's answer on c: its status, and a piece its body must hold (or NULL). */
static void expect(test_conn *c, int status, const char *piece, const char *what)
{
    int rc = test_response(c);
    CHECK(rc == 1, "%s: no response (%d)", what, rc);
    CHECK(rc != 1 || c->status == status, "%s: status %d, expected %d", what, c->status,
          status);
    CHECK(rc != 1 || !piece || strstr(c->body, piece), "%s: body '%s' lacks '%s'", what,
          c->body, piece);
}

/* A request on a new connection refused with status, and the connection closed. */
static void refused(int port, const char *request, int status, const char *what)
{
    test_conn c;

    CHECK(test_connect(&c, port) == 0, "%s: connect", what);
    test_send_str(&c, request);
    expect(&c, status, NULL, what);
    CHECK(test_closed(&c) == 1, "%s: the connection stayed open", what);
    test_close(&c, 0);
}

/* --- Cases ------------------------------------------------------------------------ */

/* Many requests on one connection; HTTP/1.0 keep-alive; close on request; HEAD. */
static void case_keepalive(test_server *ts)
{
    test_conn c;
    char target[64], piece[64];

    CHECK(test_connect(&c, ts->port) == 0, "connect");
    for (int i = 0; i < 50; i++) {
        snprintf(target, sizeof target, "/now?i=%d", i);
        snprintf(piece, sizeof piece, "i=%d ", i);
        test_get(&c, target, NULL);
        expect(&c, 200, piece, "keep-alive request");
        CHECK(c.keep_alive, "request %d: the connection would not be kept", i);
    }
    test_send_str(&c, "GET /now?v=1.0 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    expect(&c, 200, "v=1.0", "HTTP/1.0 keep-alive");
    CHECK(c.keep_alive, "HTTP/1.0 keep-alive was not kept");
    test_get(&c, "/bad-status", NULL);
    expect(&c, 500, NULL, "a handler's bad status");
    test_get(&c, "/now?last", "Connection: close\r\n");
    expect(&c, 200, "last", "Connection: close");
    CHECK(!c.keep_alive, "Connection: close was answered keep-alive");
    CHECK(test_closed(&c) == 1, "the connection stayed open after Connection: close");
    test_close(&c, 0);

    test_connect(&c, ts->port);
    test_send_str(&c, "GET /now?v=1.0 HTTP/1.0\r\n\r\n");
    expect(&c, 200, NULL, "HTTP/1.0");
    CHECK(!c.keep_alive && test_closed(&c) == 1,
          "HTTP/1.0 without keep-alive stayed open");
    test_close(&c, 0);

    /* HEAD: the headers of a GET, no body: the next bytes are the next response. */
    test_connect(&c, ts->port);
    test_send_str(&c, "HEAD /now HTTP/1.1\r\n\r\nGET /now?after-head HTTP/1.1\r\n\r\n");
    char raw[1024];
    size_t got = 0;
    int64_t until = test_now_ms() + TEST_WAIT_MS;
    while (got < sizeof raw - 1 && test_now_ms() < until) {
        ssize_t n = recv(c.fd, raw + got, sizeof raw - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
        raw[got] = '\0';
        if (strstr(raw, "after-head"))
            break;
    }
    raw[got] = '\0';
    const char *second = strstr(raw, "\r\n\r\nHTTP/1.1 200");
    CHECK(strncmp(raw, "HTTP/1.1 200", 12) == 0 && second, "HEAD: '%s'", raw);
    test_close(&c, 0);
}

static void post_keepalive(const test_server *ts)
{
    CHECK(ts->invalid_answers == 1, "bad status answers: %d", ts->invalid_answers);
    CHECK(ts->stats.accepted >= 3, "connections: %llu",
          (unsigned long long)ts->stats.accepted);
}

/* Pipelined requests answered late and out of order go out in order, their waits
 * overlapped; forty at once pass a pipeline of four. */
static void case_pipeline(test_server *ts)
{
    static const int delay[] = {200, 20, 150, 0, 100, 50, 80, 10};
    char burst[4096], piece[32];
    size_t len = 0;
    test_conn c;

    for (int k = 0; k < 8; k++)
        len += (size_t)snprintf(burst + len, sizeof burst - len,
                                "GET /after?ms=%d&i=%d HTTP/1.1\r\nHost: x\r\n\r\n",
                                delay[k], k);
    CHECK(test_connect(&c, ts->port) == 0, "connect");
    int64_t t0 = test_now_ms();
    test_send(&c, burst, len);
    for (int k = 0; k < 8; k++) {
        snprintf(piece, sizeof piece, "&i=%d ", k);
        expect(&c, 200, piece, "pipelined, late, out of order");
    }
    int64_t took = test_now_ms() - t0;
    CHECK(took < 500, "8 pipelined waits of 610 ms in all took %lld ms, not overlapped",
          (long long)took);

    len = 0;
    for (int k = 0; k < 40; k++)
        len += (size_t)snprintf(burst + len, sizeof burst - len,
                                "GET /now?i=%d HTTP/1.1\r\n\r\n", k);
    test_send(&c, burst, len);
    for (int k = 0; k < 40; k++) {
        snprintf(piece, sizeof piece, "i=%d ", k);
        expect(&c, 200, piece, "forty pipelined");
    }
    test_close(&c, 0);
}

/* Clients that leave while their answer is pending: by reset, and by close. */
static void case_orphan(test_server *ts)
{
    test_conn a, b;

    CHECK(test_connect(&a, ts->port) == 0, "connect");
    CHECK(test_connect(&b, ts->port) == 0, "connect");
    test_get(&a, "/after?ms=100", NULL);
    test_get(&b, "/after?ms=100", NULL);
    sleep_ms(20);
    test_close(&a, 1);
    test_close(&b, 0);
    CHECK(served(ts->port), "not served while answers were pending");
    sleep_ms(300);
}

static void post_orphan(const test_server *ts)
{
    CHECK(ts->orphan_answers >= 1 && ts->stats.orphaned >= 1,
          "a reset client's answer was not orphaned (%d, %llu)", ts->orphan_answers,
          (unsigned long long)ts->stats.orphaned);
}

/* Clients that pipeline requests with bodies and reset, leaving orphans that fill the
 * server's bound on requests held (8): a fresh client is then answered 503, and served
 * again once the orphans are answered. */
static void case_held(test_server *ts)
{
    static const char post[] = "POST /after?ms=1000 HTTP/1.1\r\nHost: x\r\n"
                               "Content-Length: 10\r\n\r\n0123456789";
    test_conn gone[4], fresh;

    for (int i = 0; i < 4; i++) {
        CHECK(test_connect(&gone[i], ts->port) == 0, "connect");
        test_send_str(&gone[i], post);
        test_send_str(&gone[i], post);
    }
    sleep_ms(150); /* read, on a loaded machine too, before the resets */
    for (int i = 0; i < 4; i++)
        test_close(&gone[i], 1);
    sleep_ms(100);
    CHECK(test_connect(&fresh, ts->port) == 0, "connect");
    test_get(&fresh, "/now?past-the-bound", NULL);
    expect(&fresh, 503, "Service Unavailable", "a request past the bound");
    test_close(&fresh, 0);
    sleep_ms(1100);
}

static void post_held(const test_server *ts)
{
    CHECK(ts->stats.orphaned == 8 && ts->orphan_answers == 8,
          "%llu orphaned, %d orphans answered, expected 8",
          (unsigned long long)ts->stats.orphaned, ts->orphan_answers);
    CHECK(ts->orphan_body_bytes == 0, "the orphans kept %zu bytes of bodies",
          ts->orphan_body_bytes);
    CHECK(ts->stats.unavailable >= 1, "no 503 past the bound on requests held");
    CHECK(ts->stats.held == 0 && ts->stats.held_body_bytes == 0,
          "%llu requests, %llu body bytes still held at the stop",
          (unsigned long long)ts->stats.held,
          (unsigned long long)ts->stats.held_body_bytes);
}

/* Clients that leave part way through a request: headers, body; close and reset. */
static void case_disconnect(test_server *ts)
{
    static const char *const partial[] = {
        "GET /now HTTP/1.1\r\nHost: x\r\nX-Partial: ab",
        "POST /now HTTP/1.1\r\nContent-Length: 100\r\n\r\n0123456789",
        "POST /now HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123",
        "GE",
    };
    for (int reset = 0; reset < 2; reset++)
        for (size_t i = 0; i < sizeof partial / sizeof partial[0]; i++) {
            test_conn c;
            CHECK(test_connect(&c, ts->port) == 0, "connect");
            test_send_str(&c, partial[i]);
            sleep_ms(10);
            test_close(&c, reset);
        }
    CHECK(served(ts->port), "not served after clients left mid-request");
}

static void post_disconnect(const test_server *ts)
{
    CHECK(ts->stats.requests == 2, "%llu requests, expected the 2 whole ones",
          (unsigned long long)ts->stats.requests);
}

/* Headers a byte at a time, never finished: 408 once the timeout passes, while other
 * clients are served; an idle connection is closed with no answer. */
static void case_slowloris(test_server *ts)
{
    test_conn slow, idle;
    struct pollfd pfd;
    int64_t t0 = test_now_ms();

    CHECK(test_connect(&slow, ts->port) == 0, "connect");
    CHECK(test_connect(&idle, ts->port) == 0, "connect");
    test_send_str(&slow, "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    pfd.fd = slow.fd;
    pfd.events = POLLIN;
    for (int i = 0; i < 80; i++) {
        if (poll(&pfd, 1, 25) != 0)
            break;
        if (test_send_str(&slow, "a") != 0)
            break;
        if (i == 3)
            CHECK(served(ts->port), "not served while a slowloris dribbled");
    }
    expect(&slow, 408, NULL, "slowloris");
    int64_t took = test_now_ms() - t0;
    CHECK(took >= 280 && took < 2000, "408 after %lld ms with a 300 ms timeout",
          (long long)took);
    CHECK(test_closed(&slow) == 1, "the slowloris stayed connected");
    CHECK(test_closed(&idle) == 1, "an idle connection stayed open, or was answered");
    test_close(&slow, 0);
    test_close(&idle, 0);
}

static void post_slowloris(const test_server *ts)
{
    CHECK(ts->stats.timed_out == 1, "408s: %llu",
          (unsigned long long)ts->stats.timed_out);
}

/* Every bound on a request: header bytes, header fields, declared and chunked bodies,
 * the version, CONNECT; a refusal after a good pipelined request comes after its
 * answer; a body within the bound is read whole. */
static void case_oversized(test_server *ts)
{
    char big[4096], many[2048], chunked[8192];
    size_t len;
    test_conn c;

    len = (size_t)snprintf(big, sizeof big, "GET /now HTTP/1.1\r\nX-Big: ");
    memset(big + len, 'v', 2000);
    snprintf(big + len + 2000, sizeof big - len - 2000, "\r\n\r\n");
    refused(ts->port, big, 431, "2000 header bytes");

    len = (size_t)snprintf(many, sizeof many, "GET /now HTTP/1.1\r\n");
    for (int i = 0; i < 20; i++)
        len += (size_t)snprintf(many + len, sizeof many - len, "X-H%d: %d\r\n", i, i);
    snprintf(many + len, sizeof many - len, "\r\n");
    refused(ts->port, many, 431, "20 header fields");

    refused(ts->port, "POST /now HTTP/1.1\r\nContent-Length: 10000\r\n\r\n", 413,
            "a declared body of 10000 bytes");
    len = (size_t)snprintf(chunked, sizeof chunked,
                           "POST /now HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 10; i++) {
        len += (size_t)snprintf(chunked + len, sizeof chunked - len, "1f4\r\n");
        memset(chunked + len, 'b', 500);
        len += 500;
        len += (size_t)snprintf(chunked + len, sizeof chunked - len, "\r\n");
    }
    CHECK(test_connect(&c, ts->port) == 0, "connect");
    test_send(&c, chunked, len);
    expect(&c, 413, NULL, "a chunked body past the bound");
    test_close(&c, 0);

    refused(ts->port, "GET /now HTTP/2.0\r\n\r\n", 505, "HTTP/2.0");
    refused(ts->port, "CONNECT example.com:443 HTTP/1.1\r\n\r\n", 400, "CONNECT");

    len = (size_t)snprintf(big, sizeof big, "GET /now?first HTTP/1.1\r\n\r\n");
    len += (size_t)snprintf(big + len, sizeof big - len, "GET /now HTTP/1.1\r\nX-Big: ");
    memset(big + len, 'v', 2000);
    snprintf(big + len + 2000, sizeof big - len - 2000, "\r\n\r\n");
    CHECK(test_connect(&c, ts->port) == 0, "connect");
    test_send_str(&c, big);
    expect(&c, 200, "first", "a good request before a refused one");
    expect(&c, 431, NULL, "the refused one after it");
    CHECK(test_closed(&c) == 1, "open after a refusal");
    test_close(&c, 0);

    len = (size_t)snprintf(big, sizeof big,
                           "POST /now HTTP/1.1\r\nContent-Length: 3000\r\n\r\n");
    memset(big + len, 'b', 3000);
    test_connect(&c, ts->port);
    test_send(&c, big, len + 3000);
    expect(&c, 200, "body=3000", "a body within the bound");
    test_close(&c, 0);
}

static void post_oversized(const test_server *ts)
{
    const ld_http_server_stats *st = &ts->stats;

    CHECK(st->headers_too_large == 3 && st->body_too_large == 2 && st->bad_version == 1 &&
              st->bad_request == 1,
          "431 x%llu, 413 x%llu, 505 x%llu, 400 x%llu",
          (unsigned long long)st->headers_too_large,
          (unsigned long long)st->body_too_large, (unsigned long long)st->bad_version,
          (unsigned long long)st->bad_request);
}

/* Random bytes, and random text in HTTP's alphabet, on 80 connections at once: each is
 * refused (4xx/5xx) or closed, none answered 200, none left hanging. */
static void case_garbage(test_server *ts)
{
    enum { N = 80 };
    static const char alphabet[] = "GET /HTP1.0\r\n :aA-=?&%%chunkd";
    static test_conn c[N];
    ld_pcg32 rng;
    char bytes[2048];

    ld_pcg32_seed(&rng, 2024, 7);
    for (int i = 0; i < N; i++) {
        size_t len = 1 + ld_pcg32_bounded(&rng, sizeof bytes - 1);
        for (size_t k = 0; k < len; k++)
            bytes[k] = i < N / 2 ? (char)ld_pcg32_bounded(&rng, 256)
                                 : alphabet[ld_pcg32_bounded(&rng, sizeof alphabet - 1)];
        CHECK(test_connect(&c[i], ts->port) == 0, "connect %d", i);
        test_send(&c[i], bytes, len);
    }
    for (int i = 0; i < N; i++) {
        int rc = 0;
        for (int k = 0; k < 4 && (rc = test_response(&c[i])) == 1; k++)
            CHECK(c[i].status >= 400, "garbage %d answered %d", i, c[i].status);
        CHECK(rc != -1 || errno == ECONNRESET, "garbage %d: neither refused nor closed",
              i);
        test_close(&c[i], 0);
    }
    test_conn ok;
    test_connect(&ok, ts->port);
    test_send_str(&ok, "GET /now?then HTTP/1.1\r\n\r\n\x01\x02garbage\r\n\r\n");
    expect(&ok, 200, "then", "a request before garbage");
    expect(&ok, 400, NULL, "the garbage after it");
    test_close(&ok, 0);
}

/* Past the connection bound: 503 and closed, while the connections within it are
 * served; one closing makes room for another. */
static void case_exhaustion(test_server *ts)
{
    test_conn held[4], extra;

    for (int i = 0; i < 4; i++) {
        CHECK(test_connect(&held[i], ts->port) == 0, "connect %d", i);
        test_get(&held[i], "/now?held", NULL);
        expect(&held[i], 200, "held", "a connection within the bound");
    }
    for (int i = 0; i < 5; i++) {
        CHECK(test_connect(&extra, ts->port) == 0, "connect past the bound");
        expect(&extra, 503, NULL, "a connection past the bound");
        CHECK(test_closed(&extra) == 1, "a connection past the bound stayed open");
        test_close(&extra, 0);
    }
    test_get(&held[0], "/now?still", NULL);
    expect(&held[0], 200, "still", "a held connection while others are turned away");
    test_close(&held[3], 0);
    CHECK(served(ts->port), "no room after a connection closed");
    for (int i = 0; i < 3; i++)
        test_close(&held[i], 0);
}

static void post_exhaustion(const test_server *ts)
{
    CHECK(ts->stats.unavailable >= 5 && ts->stats.peak_open == 4, "503 x%llu, peak %llu",
          (unsigned long long)ts->stats.unavailable,
          (unsigned long long)ts->stats.peak_open);
}

/* The requests bound is a count: the last answer closes; pipelined ones after it are
 * not read. */
static void case_requests(test_server *ts)
{
    test_conn c;

    CHECK(test_connect(&c, ts->port) == 0, "connect");
    for (int i = 0; i < 3; i++) {
        test_get(&c, "/now", NULL);
        expect(&c, 200, NULL, "within the count");
        CHECK(c.keep_alive == (i < 2), "request %d: keep-alive %d", i, c.keep_alive);
    }
    CHECK(test_closed(&c) == 1, "open after the last request");
    test_close(&c, 0);

    test_connect(&c, ts->port);
    test_send_str(&c, "GET /now?i=0 HTTP/1.1\r\n\r\nGET /now?i=1 HTTP/1.1\r\n\r\n"
                      "GET /now?i=2 HTTP/1.1\r\n\r\nGET /now?i=3 HTTP/1.1\r\n\r\n"
                      "GET /now?i=4 HTTP/1.1\r\n\r\n");
    expect(&c, 200, "i=0", "pipelined 0");
    expect(&c, 200, "i=1", "pipelined 1");
    expect(&c, 200, "i=2", "pipelined 2");
    CHECK(!c.keep_alive, "the third was answered keep-alive");
    CHECK(test_closed(&c) == 1, "answered past the count");
    test_close(&c, 0);
}

/* A client that pipelines megabytes of requests and reads none of the answers: the
 * pipeline stops the reading, the writes back up, the clock runs out and the server
 * closes the connection, serving others meanwhile. */
static void case_nonreader(test_server *ts)
{
    static const char one[] = "GET /nowx HTTP/1.1\r\n\r\n\r\n";
    static char burst[1000 * (sizeof one - 1)];
    test_conn c;
    size_t sent = 0;

    for (size_t at = 0; at < sizeof burst; at += sizeof one - 1)
        memcpy(burst + at, one, sizeof one - 1);
    CHECK(test_connect(&c, ts->port) == 0, "connect");
    for (int64_t until = test_now_ms() + 2000; sent < 100 * sizeof burst;) {
        ssize_t n = send(c.fd, burst, sizeof burst, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            sent += (size_t)n;
        else if (test_now_ms() > until)
            break;
        else
            sleep_ms(5);
    }
    CHECK(sent > sizeof burst, "only %zu bytes of requests went", sent);
    CHECK(served(ts->port), "not served beside a client that does not read");
    sleep_ms(800);
    char drain[65536];
    ssize_t n;
    size_t got = 0;
    while ((n = recv(c.fd, drain, sizeof drain, 0)) > 0 && got < 100 * sizeof burst * 8)
        got += (size_t)n;
    CHECK(n == 0 || (n < 0 && errno == ECONNRESET), "still open after %zu bytes (%zd %d)",
          got, n, errno);
    printf("nonreader: sent %zu bytes of requests, read %zu of answers\n", sent, got);
    test_close(&c, 0);
}

static void post_nonreader(const test_server *ts)
{
    CHECK(ts->stats.requests > 1000 && ts->stats.bad_request == 0,
          "%llu requests, %llu refused", (unsigned long long)ts->stats.requests,
          (unsigned long long)ts->stats.bad_request);
}

/* The server closes while answers are pending: they are orphaned, not lost memory. */
static void case_server_close(test_server *ts)
{
    test_conn a, b;

    CHECK(test_connect(&a, ts->port) == 0, "connect");
    CHECK(test_connect(&b, ts->port) == 0, "connect");
    test_get(&a, "/after?ms=300", NULL);
    test_get(&b, "/after?ms=300", NULL);
    sleep_ms(30);
    test_close(&a, 0);
    test_close(&b, 0);
}

static void post_server_close(const test_server *ts)
{
    CHECK(ts->orphan_answers == 2, "orphaned answers: %d", ts->orphan_answers);
}

typedef struct test_case {
    const char *name;
    void (*run)(test_server *ts);
    void (*post)(const test_server *ts);
    ld_http_limits limits; /* over the common ones, where not 0 */
} test_case;

static const test_case cases[] = {
    {"keepalive", case_keepalive, post_keepalive, {0}},
    {"pipeline", case_pipeline, NULL, {0}},
    {"orphan", case_orphan, post_orphan, {0}},
    {"held", case_held, post_held, {.held = 8}},
    {"disconnect", case_disconnect, post_disconnect, {0}},
    {"slowloris", case_slowloris, post_slowloris, {0}},
    {"oversized", case_oversized, post_oversized, {0}},
    {"garbage", case_garbage, NULL, {.connections = 128}},
    {"exhaustion",
     case_exhaustion,
     post_exhaustion,
     {.connections = 4, .request_timeout_ms = 5000}},
    {"requests", case_requests, NULL, {.requests = 3}},
    {"nonreader", case_nonreader, post_nonreader, {.requests = 1000000}},
    {"server-close", case_server_close, post_server_close, {0}},
};

/* The common bounds, small enough for a test to pass each one quickly. */
static void limits_for(const test_case *tc, ld_http_limits *l)
{
    const ld_http_limits *o = &tc->limits;

    *l = (ld_http_limits){.header_bytes = 1024,
                          .headers = 16,
                          .body_bytes = 4096,
                          .requests = 100,
                          .connections = 16,
                          .request_timeout_ms = 300,
                          .pipeline = 4};
    l->connections = o->connections ? o->connections : l->connections;
    l->request_timeout_ms =
        o->request_timeout_ms ? o->request_timeout_ms : l->request_timeout_ms;
    l->requests = o->requests ? o->requests : l->requests;
    l->held = o->held;
}

int main(int argc, char **argv)
{
    static test_server ts;
    const test_case *tc = NULL;

    signal(SIGPIPE, SIG_IGN);
    for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0)
            tc = &cases[i];
    if (!tc) {
        fprintf(stderr, "usage: test_http_server CASE\n");
        return 2;
    }
    limits_for(tc, &ts.limits);
    if (server_start(&ts) != 0) {
        fprintf(stderr, "test_http_server: the server did not start: %d\n", ts.rc);
        return 1;
    }
    tc->run(&ts);
    CHECK(served(ts.port), "not served after the case");
    server_stop(&ts);
    if (tc->post)
        tc->post(&ts);
    printf("%s: %s\n", tc->name, failures ? "FAILED" : "ok");
    return failures != 0;
}
