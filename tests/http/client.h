/* client.h: the http tests' client, blocking sockets to 127.0.0.1 over the client
 * helpers of http.h. Every wait is bounded: a socket gives up on a read after
 * TEST_WAIT_MS, so a server that stops answering fails a test instead of hanging it.
 */
#ifndef LD_TEST_HTTP_CLIENT_H
#define LD_TEST_HTTP_CLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

#define TEST_WAIT_MS 5000
#define TEST_BODY_MAX 4096

typedef struct test_conn {
    ld_http_response_parser *parser;
    size_t off, len; /* buf[off..len) read and not yet parsed */
    int fd;
    int status; /* of the last response */
    int keep_alive;
    char body[TEST_BODY_MAX + 1];
    char buf[8192];
} test_conn;

static inline int64_t test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Connect to 127.0.0.1:port, reads bounded by wait_ms; 0 or -1. */
static inline int test_connect_wait(test_conn *c, int port, int wait_ms)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval tv = {.tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000};
    int one = 1;

    memset(c, 0, sizeof *c);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0)
        return -1;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        ld_http_response_parser_open(&c->parser, TEST_BODY_MAX) != 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

static inline int test_connect(test_conn *c, int port)
{
    return test_connect_wait(c, port, TEST_WAIT_MS);
}

/* Send all of data; 0, or -1 once the server has gone. */
static inline int test_send(test_conn *c, const void *data, size_t len)
{
    const char *at = data;

    while (len > 0) {
        ssize_t n = send(c->fd, at, len, MSG_NOSIGNAL);
        if (n <= 0)
            return -1;
        at += n;
        len -= (size_t)n;
    }
    return 0;
}

static inline int test_send_str(test_conn *c, const char *s)
{
    return test_send(c, s, strlen(s));
}

/* GET target with extra header lines (or NULL); 0 or -1. */
static inline int test_get(test_conn *c, const char *target, const char *headers)
{
    char req[2048];
    int n = ld_http_format_request(req, sizeof req, "GET", target, "127.0.0.1", headers,
                                   NULL, 0);
    if (n < 0 || (size_t)n >= sizeof req)
        return -1;
    return test_send(c, req, (size_t)n);
}

/* Read the next response into status, keep_alive and body: 1; 0 when the server
 * closed before one began; -1 for a reset, a timeout or bytes that are no response. */
static inline int test_response(test_conn *c)
{
    for (;;) {
        ld_http_response res;
        size_t used;
        if (c->off < c->len) {
            int rc = ld_http_response_feed(c->parser, c->buf + c->off, c->len - c->off,
                                           &used, &res);
            c->off += used;
            if (rc < 0)
                return -1;
            if (rc == 1) {
                c->status = res.status;
                c->keep_alive = res.keep_alive;
                memcpy(c->body, res.body, res.body_len);
                c->body[res.body_len] = '\0';
                return 1;
            }
        }
        ssize_t n = recv(c->fd, c->buf, sizeof c->buf, 0);
        if (n == 0) {
            int rc = ld_http_response_end(c->parser, &res);
            if (rc == 1) {
                c->status = res.status;
                c->keep_alive = 0;
                return 1;
            }
            return rc == 0 ? 0 : -1;
        }
        if (n < 0)
            return -1;
        c->off = 0;
        c->len = (size_t)n;
    }
}

/* The server closes the connection, with no more bytes: 1; 0 if bytes came, -1 if
 * nothing happened within the socket's wait. A reset counts as a close. */
static inline int test_closed(test_conn *c)
{
    char b[256];

    if (c->off < c->len)
        return 0;
    ssize_t n = recv(c->fd, b, sizeof b, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
        return 1;
    return n < 0 ? -1 : 0;
}

/* Close; with reset, abortively (RST instead of FIN). */
static inline void test_close(test_conn *c, int reset)
{
    if (c->fd >= 0 && reset) {
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    ld_http_response_parser_free(c->parser);
    c->parser = NULL;
}

#endif
