/* http_client_blocking.c: one kept-alive connection on blocking sockets: connect,
 * send and recv on the calling OS thread (http_client.h). The request's deadline bounds
 * the connect and the sends through SO_SNDTIMEO (which Linux applies to connect too),
 * and each wait for the reply through poll. */
#include "http_client_inbox.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ld_http_conn {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    int fd;      /* -1 until the next request connects */
    bool reused; /* fd has carried a request before this one */
    uint64_t timeout_ns;
    uint64_t deadline; /* the request's, on uv_hrtime's clock */
    char host[LD_HTTP_HOST_MAX];
    ld_http_inbox in;
};

static socklen_t addr_len(const struct sockaddr *addr)
{
    return addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                       : sizeof(struct sockaddr_in);
}

int ld_http_conn_open(ld_http_conn **out, const struct sockaddr *addr, const char *host,
                      uint64_t timeout_ns)
{
    if (strlen(host) >= LD_HTTP_HOST_MAX ||
        (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
        return -EINVAL;
    ld_http_conn *c = calloc(1, sizeof *c);
    if (!c)
        return -ENOMEM;
    c->addr_len = addr_len(addr);
    memcpy(&c->addr, addr, c->addr_len);
    strcpy(c->host, host);
    c->fd = -1;
    c->timeout_ns = ld_http_timeout(timeout_ns);
    *out = c;
    return 0;
}

/* Drop the connection; the next request makes a new one. */
static void conn_drop(ld_http_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->reused = false;
    ld_http_inbox_close(&c->in);
}

/* The socket's send timeout: what is left of the request's time, at least 1 us (0
 * would mean none). */
static int conn_send_within(const ld_http_conn *c)
{
    uint64_t left = ld_http_left(c->deadline);
    struct timeval tv = {.tv_sec = (time_t)(left / 1000000000u),
                         .tv_usec = (suseconds_t)(left % 1000000000u / 1000u)};

    if (left < 1000u)
        return -ETIMEDOUT;
    return setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0 ? 0 : -errno;
}

/* A send or connect that ran out of time says EAGAIN or EINPROGRESS: -ETIMEDOUT. */
static int timed_out_as(int err)
{
    return err == EAGAIN || err == EWOULDBLOCK || err == EINPROGRESS ? -ETIMEDOUT : -err;
}

/* A new connection within the request's time, with Nagle's algorithm off so that a
 * request never waits for an ACK. */
static int conn_connect(ld_http_conn *c)
{
    int one = 1;
    int rc = ld_http_inbox_open(&c->in);

    if (rc != 0)
        return rc;
    c->fd = socket(c->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -errno;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rc = conn_send_within(c);
    if (rc != 0)
        return rc;
    while ((rc = connect(c->fd, (struct sockaddr *)&c->addr, c->addr_len)) != 0 &&
           errno == EINTR)
        ;
    return rc == 0 ? 0 : timed_out_as(errno);
}

static int conn_send(ld_http_conn *c)
{
    int rc = conn_send_within(c);

    for (size_t sent = 0; rc == 0 && sent < c->in.req_len;) {
        ssize_t n = send(c->fd, c->in.req + sent, c->in.req_len - sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EINTR)
            return timed_out_as(errno);
        sent += n > 0 ? (size_t)n : 0;
    }
    return rc;
}

/* recv on the connection's socket once it has bytes or an end, before the request's
 * deadline; retried when a signal interrupts either. */
static ssize_t socket_read(void *transport, void *buf, size_t len)
{
    const ld_http_conn *c = transport;
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    ssize_t n;

    for (;;) {
        uint64_t left = ld_http_left(c->deadline);
        uint64_t ms = (left + 999999u) / 1000000u;
        if (left == 0)
            return -ETIMEDOUT;
        n = poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms);
        if (n > 0 || (n < 0 && errno != EINTR))
            break;
    }
    if (n < 0)
        return -errno;
    while ((n = recv(c->fd, buf, len, 0)) < 0 && errno == EINTR)
        ;
    return n < 0 ? -errno : n;
}

/* One request on the connection there is, or on a new one. */
static int conn_exchange(ld_http_conn *c, const char *target, ld_http_reply *out)
{
    int rc = c->fd < 0 ? conn_connect(c) : 0;

    if (rc == 0)
        rc = ld_http_inbox_request(&c->in, target, c->host);
    if (rc == 0)
        rc = conn_send(c);
    if (rc == 0)
        rc = ld_http_inbox_receive(&c->in, socket_read, c, out);
    return rc == 1 ? 0 : rc;
}

int ld_http_conn_get(ld_http_conn *c, const char *target, ld_http_reply *out)
{
    c->deadline = uv_hrtime() + c->timeout_ns;
    int rc = conn_exchange(c, target, out);

    if (rc != 0 && c->reused && ld_http_inbox_stale(&c->in, rc)) {
        conn_drop(c);
        rc = conn_exchange(c, target, out);
    }
    if (rc != 0 || !c->in.keep_alive)
        conn_drop(c);
    else
        c->reused = true;
    return rc;
}

void ld_http_conn_close(ld_http_conn *c)
{
    if (!c)
        return;
    conn_drop(c);
    free(c);
}
