/* settle_http.c: where settle's checks go, and each check as a request to the
 * clearinghouse (settle_http.h). */
#include "settle_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

/* How long rank 0 waits for an external clearinghouse to take a connection. */
#define PROBE_MS 5000

static const char *const call_path[LD_SETTLE_CALLS] = {
    [LD_CALL_COUNTERPARTY] = "/counterparty",
    [LD_CALL_BUYING_POWER] = "/buying-power",
    [LD_CALL_SHARES] = "/shares",
};

enum where { AT_LOCAL, AT_RANK0, AT_HOST };

static enum where where_of(const ld_settle_config *sc)
{
    if (strcmp(sc->clearinghouse, "local") == 0)
        return AT_LOCAL;
    return strcmp(sc->clearinghouse, "rank0") == 0 ? AT_RANK0 : AT_HOST;
}

/* --- Addresses --------------------------------------------------------------------- */

/* HOST:PORT, or [HOST]:PORT for an IPv6 address, into host and port: a port of 1 to
 * 65535 in digits. -EINVAL for anything else. */
static int split_address(const char *text, char *host, size_t size, char port[6])
{
    const char *colon, *begin = text + (text[0] == '[');
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        colon = close && close[1] == ':' ? close + 1 : NULL;
    } else {
        colon = strchr(text, ':');
        colon = colon && !strchr(colon + 1, ':') ? colon : NULL;
    }
    if (!colon)
        return -EINVAL;
    size_t len = (size_t)(colon - begin) - (text[0] == '[');
    size_t digits = strspn(colon + 1, "0123456789");
    if (len == 0 || len >= size || digits == 0 || digits > 5 || colon[1 + digits])
        return -EINVAL;
    long p = strtol(colon + 1, NULL, 10);
    if (p < 1 || p > 65535)
        return -EINVAL;
    memcpy(host, begin, len);
    host[len] = '\0';
    memcpy(port, colon + 1, digits + 1);
    return 0;
}

/* The first address HOST:PORT resolves to; on failure, why in why[0..len) if given. */
static int resolve(const char *text, struct sockaddr_storage *out, char *why, size_t len)
{
    char host[LD_OPT_TEXT_MAX], port[6];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (split_address(text, host, sizeof host, port) != 0)
        return -EINVAL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        if (why)
            snprintf(why, len, "cannot resolve the clearinghouse's host '%s': %s", host,
                     gai_strerror(rc));
        return rc == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
    }
    memcpy(out, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
}

static socklen_t addr_len(const struct sockaddr_storage *a)
{
    return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                    : sizeof(struct sockaddr_in);
}

/* Whether a server at addr takes a connection within PROBE_MS: 0, or why not. */
static int probe(const struct sockaddr_storage *addr)
{
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc = connect(fd, (const struct sockaddr *)addr, addr_len(addr)) == 0 ? 0 : -errno;
    if (rc == -EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = 0;
        socklen_t len = sizeof err;
        rc = poll(&p, 1, PROBE_MS);
        if (rc > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0)
            rc = -err;
        else
            rc = rc == 0 ? -ETIMEDOUT : -errno;
    }
    close(fd);
    return rc;
}

/* --- The options ------------------------------------------------------------------- */

static int say(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int ld_settle_http_check(const void *opts, char *err, size_t errlen)
{
    const ld_settle_config *sc = opts;
    char host[LD_OPT_TEXT_MAX], port[6];
    enum where w = where_of(sc);

    if (w == AT_HOST && split_address(sc->clearinghouse, host, sizeof host, port) != 0)
        return say(err, errlen,
                   "--clearinghouse takes local, rank0 or HOST:PORT (a port from 1 to "
                   "65535; an IPv6 address in brackets), not '%s'",
                   sc->clearinghouse);
    if (sc->io == LD_SETTLE_SLEEP && (w != AT_LOCAL || sc->ch_max_inflight))
        return say(err, errlen,
                   "--clearinghouse and --ch-max-inflight are for --io http: under "
                   "--io sleep no check goes to a clearinghouse");
    if (w == AT_HOST && sc->ch_max_inflight)
        return say(err, errlen,
                   "--ch-max-inflight caps a clearinghouse loomdist starts (local or "
                   "rank0); the one at %s keeps its own bounds",
                   sc->clearinghouse);
    return 0;
}

/* --- Starting one ------------------------------------------------------------------ */

/* Descriptors a clearinghouse leaves to the rest of its process (MPI, HDF5, libpq,
 * the rank's own clients), and the most connections it takes whatever the limit. */
#define FD_SPARE 256u
#define CONNECTIONS_MAX (1u << 20)

/* The connections a clearinghouse takes: a client's set of connections opens one per
 * check in flight, so as many as the process may open files, less FD_SPARE (or half,
 * under a low limit), so that no peer can take the descriptors the run itself needs. */
static uint32_t connection_cap(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur > CONNECTIONS_MAX)
        return CONNECTIONS_MAX;
    uint32_t n = (uint32_t)rl.rlim_cur;
    return n > 2 * FD_SPARE ? n - FD_SPARE : n / 2;
}

/* A clearinghouse on a thread of its own, on a free port of listen_ip; it holds one
 * check per connection, and as many again left by clients that have gone (http.h's
 * default). */
static int start_service(const char *listen_ip, const ld_settle_config *sc,
                         ld_clearinghouse_thread **out)
{
    struct sockaddr_in a;
    ld_http_limits lim = {.connections = connection_cap()};
    int rc = uv_ip4_addr(listen_ip, 0, &a);
    return rc ? rc
              : ld_clearinghouse_start(out, (struct sockaddr *)&a, &lim,
                                       sc->ch_max_inflight);
}

/* An external clearinghouse, resolved and tried on rank 0. */
static int reach(const char *text, char *blob, size_t len)
{
    struct sockaddr_storage a;
    int rc = resolve(text, &a, blob, len);
    if (rc == 0 && (rc = probe(&a)) != 0)
        snprintf(blob, len, "cannot reach the clearinghouse at %s: %s", text,
                 strerror(-rc));
    if (rc == 0)
        snprintf(blob, len, "%s", text);
    return rc;
}

/* The IPv4 address host resolves to, as text: where rank 0's clearinghouse listens,
 * so that it is on the one interface the other ranks come by and no other. */
static int listen_ip_of(const char *host, char *ip, size_t len, char *why, size_t whylen)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(why, whylen, "rank 0's host name '%s' does not resolve: %s", host,
                 gai_strerror(rc));
        return rc == EAI_MEMORY ? -ENOMEM : -EHOSTUNREACH;
    }
    const struct sockaddr_in *a = (const struct sockaddr_in *)(void *)res->ai_addr;
    rc = inet_ntop(AF_INET, &a->sin_addr, ip, (socklen_t)len) ? 0 : -errno;
    freeaddrinfo(res);
    return rc;
}

/* A clearinghouse on rank 0 listens where the others can reach it: on loopback when
 * they share its node, else on the address its host name resolves to. */
int ld_settle_http_share(const ld_job_config *cfg, const char *host, char *blob,
                         size_t len, void **state)
{
    const ld_settle_config *sc = cfg->opts;
    ld_clearinghouse_thread *t;
    char ip[INET_ADDRSTRLEN];

    blob[0] = '\0';
    if (sc->io != LD_SETTLE_HTTP || where_of(sc) == AT_LOCAL)
        return 0;
    if (where_of(sc) == AT_HOST)
        return reach(sc->clearinghouse, blob, len);
    int rc = listen_ip_of(host, ip, sizeof ip, blob, len);
    if (rc != 0)
        return rc;
    rc = start_service(ip, sc, &t);
    if (rc != 0) {
        snprintf(blob, len, "cannot start the clearinghouse on rank 0 (%s): %s", ip,
                 strerror(-rc));
        return rc;
    }
    snprintf(blob, len, "%s:%d", host, ld_clearinghouse_thread_port(t));
    *state = t;
    return 0;
}

void ld_settle_http_unshare(void *state)
{
    ld_clearinghouse_stop(state, NULL);
}

int ld_settle_http_open(ld_settle_http **out, const ld_job_config *cfg)
{
    const ld_settle_config *sc = cfg->opts;
    ld_settle_http *h = calloc(1, sizeof *h);
    int rc;

    if (!h)
        return -ENOMEM;
    snprintf(h->tail, sizeof h->tail, "&seed=%" PRIu64 "&scale=%.17g&fail=%.17g",
             cfg->seed, sc->latency_scale * cfg->slow_factor, sc->fail_rate);
    h->timeout_ns = (uint64_t)(sc->ch_timeout * 1e9);
    if (cfg->shared && cfg->shared[0]) {
        rc = resolve(cfg->shared, &h->addr, NULL, 0);
        snprintf(h->host, sizeof h->host, "%s", cfg->shared);
    } else {
        rc = start_service("127.0.0.1", sc, &h->local);
        int port = rc == 0 ? ld_clearinghouse_thread_port(h->local) : 0;
        uv_ip4_addr("127.0.0.1", port, (struct sockaddr_in *)&h->addr);
        snprintf(h->host, sizeof h->host, "127.0.0.1:%d", port);
    }
    if (rc != 0) {
        free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void ld_settle_http_close(ld_settle_http *h)
{
    if (!h)
        return;
    if (h->local)
        ld_clearinghouse_stop(h->local, NULL);
    free(h);
}

/* --- Checks ------------------------------------------------------------------------ */

void ld_settle_http_target(const ld_settle_http *h, const ld_trade *t, int call,
                           char *out, size_t size)
{
    snprintf(out, size, "%s?trade=%" PRIu64 "%s", call_path[call], t->id, h->tail);
}

/* A 503 is a server at one of its bounds (connections, say): worth its own code. */
int ld_settle_http_outcome(int rc, const ld_http_reply *reply)
{
    if (rc != 0)
        return rc;
    if (reply->status == 200 && strcmp(reply->body, "fail\n") == 0)
        return 1;
    if (reply->status == 200 && strcmp(reply->body, "pass\n") == 0)
        return 0;
    return reply->status == 503 ? -EAGAIN : -EPROTO;
}

/* One check on whichever transport is given. */
static int check(ld_http_conn *c, ld_http_conns *set, const ld_settle_http *h,
                 const ld_trade *t, int call)
{
    char target[LD_SETTLE_TARGET_MAX];
    ld_http_reply reply;
    ld_settle_http_target(h, t, call, target, sizeof target);
    int rc =
        c ? ld_http_conn_get(c, target, &reply) : ld_http_conns_get(set, target, &reply);
    return ld_settle_http_outcome(rc, &reply);
}

int ld_settle_http_blocking(ld_http_conn *c, const ld_settle_http *h, const ld_trade *t,
                            int call)
{
    return check(c, NULL, h, t, call);
}

int ld_settle_http_green(ld_http_conns *set, const ld_settle_http *h, const ld_trade *t,
                         int call)
{
    return check(NULL, set, h, t, call);
}

void ld_settle_http_figures(const ld_settle_http *h, ld_figures *figures)
{
    ld_clearinghouse_stats st;

    if (!h || !h->local || !figures)
        return;
    ld_clearinghouse_thread_window(h->local, &st);
    const ld_http_server_stats *x = &st.http;
    uint64_t errors = st.refused + st.abandoned + x->bad_request + x->timed_out +
                      x->body_too_large + x->headers_too_large + x->unavailable +
                      x->bad_version;
    ld_figure_add(figures, "ch_checks", (double)st.served, "checks");
    ld_figure_add(figures, "ch_connections", (double)x->accepted, "connections");
    ld_figure_add(figures, "ch_peak_in_flight", (double)st.peak_in_flight, "checks");
    ld_figure_add(figures, "ch_mean_in_flight", st.mean_in_flight, "checks");
    ld_figure_add(figures, "ch_p99_latency", (double)st.latency_p99_ns / 1e6, "ms");
    ld_figure_add(figures, "ch_errors", (double)errors, "requests");
}
