/* clearinghouse.c: the checks' endpoints on an HTTP server, each answer a deadline.
 *
 * A check is planned on arrival, as sleep mode plans the trade (ld_settle_plan_trade),
 * and waits on the loop's deadlines (deadlines.h) for its call's latency, at the
 * nanosecond resolution settle's callbacks strategy waits at. Deadlines cannot be
 * withdrawn, so a check stays on the waiting list until its deadline fires; one whose
 * client has gone is answered all the same, and the server drops the answer. Under a
 * cap on checks in flight, a check past it waits in a queue, in arrival order, and
 * starts its latency when an answer makes room; one whose client has gone by then is
 * dropped there, so that it takes no room from the live ones.
 */
#include "clearinghouse.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "deadlines.h"
#include "hist.h"
#include "settle_plan.h"

typedef struct ch_check ch_check;

struct ld_clearinghouse {
    ld_http_server *server;
    ld_deadlines *deadlines;
    ch_check *waiting;              /* checks whose deadline has not fired */
    ch_check *queued, *queued_last; /* checks past the cap, oldest first */
    uint64_t max_in_flight;         /* 0: no cap */
    bool admitting;                 /* ch_admit_queued is running */
    ld_clearinghouse_stats stats;
    ld_http_server_stats http_base; /* the server's counters when the window began */
    uint64_t first_ns;              /* the first check's arrival */
    uint64_t changed_ns;            /* in_flight's last change */
    double area; /* in_flight integrated over time up to changed_ns, in ns */
    /* The latencies of the checks answered, in ns: percentiles within 1/64. */
    ld_hist latency;
};

struct ch_check {
    ld_http_request *req;
    ch_check *prev, *next; /* on the waiting list; next alone in the queue */
    uint64_t arrived_ns;
    int64_t latency_ns; /* the call's planned latency, or the think time */
    const char *answer; /* the body: "pass\n", "fail\n" or "ok\n" */
    bool fails;
};

/* --- Observability ----------------------------------------------------------------- */

/* in_flight changes by delta at now: add the time at the old count to the area. */
static void ch_in_flight(ld_clearinghouse *ch, uint64_t now, int delta)
{
    ld_clearinghouse_stats *st = &ch->stats;

    if (ch->first_ns == 0)
        ch->first_ns = ch->changed_ns = now;
    ch->area += (double)st->in_flight * (double)(now - ch->changed_ns);
    ch->changed_ns = now;
    st->in_flight = delta > 0 ? st->in_flight + 1 : st->in_flight - 1;
    if (st->in_flight > st->peak_in_flight)
        st->peak_in_flight = st->in_flight;
}

/* The server's counters since the window began; open and peak_open as they are. */
static void ch_http_since(ld_http_server_stats *h, const ld_http_server_stats *base)
{
    h->accepted -= base->accepted;
    h->requests -= base->requests;
    h->orphaned -= base->orphaned;
    h->bad_request -= base->bad_request;
    h->timed_out -= base->timed_out;
    h->body_too_large -= base->body_too_large;
    h->headers_too_large -= base->headers_too_large;
    h->unavailable -= base->unavailable;
    h->bad_version -= base->bad_version;
}

void ld_clearinghouse_stats_get(const ld_clearinghouse *ch, ld_clearinghouse_stats *out)
{
    uint64_t now = uv_hrtime();
    uint64_t end = ch->stats.in_flight ? now : ch->changed_ns;
    double area = ch->area + (double)ch->stats.in_flight * (double)(end - ch->changed_ns);

    *out = ch->stats;
    out->mean_in_flight = end > ch->first_ns ? area / (double)(end - ch->first_ns) : 0;
    out->latency_p50_ns = (int64_t)ld_hist_quantile(&ch->latency, 0.50);
    out->latency_p90_ns = (int64_t)ld_hist_quantile(&ch->latency, 0.90);
    out->latency_p99_ns = (int64_t)ld_hist_quantile(&ch->latency, 0.99);
    ld_http_server_stats_get(ch->server, &out->http);
    ch_http_since(&out->http, &ch->http_base);
}

/* Everything counted so far is the last window's; the checks in flight now open the
 * next one. */
void ld_clearinghouse_stats_restart(ld_clearinghouse *ch)
{
    uint64_t in_flight = ch->stats.in_flight;

    memset(&ch->stats, 0, sizeof ch->stats);
    ld_hist_reset(&ch->latency);
    ch->stats.in_flight = ch->stats.peak_in_flight = in_flight;
    ch->area = 0;
    ch->first_ns = ch->changed_ns = in_flight ? uv_hrtime() : 0;
    ld_http_server_stats_get(ch->server, &ch->http_base);
}

void ld_clearinghouse_print(const ld_clearinghouse_stats *st, FILE *out)
{
    const ld_http_server_stats *h = &st->http;

    fprintf(out,
            "clearinghouse: %llu checks served (%llu failed), %llu refused, %llu "
            "abandoned\n",
            (unsigned long long)st->served, (unsigned long long)st->failed,
            (unsigned long long)st->refused, (unsigned long long)st->abandoned);
    fprintf(out, "clearinghouse: in flight: %llu now, peak %llu, mean %.2f\n",
            (unsigned long long)st->in_flight, (unsigned long long)st->peak_in_flight,
            st->mean_in_flight);
    fprintf(out,
            "clearinghouse: latency p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms\n",
            (double)st->latency_p50_ns / 1e6, (double)st->latency_p90_ns / 1e6,
            (double)st->latency_p99_ns / 1e6, (double)st->latency_max_ns / 1e6);
    fprintf(out,
            "clearinghouse: %llu connections (peak %llu open), %llu requests, %llu "
            "orphaned; refused 400 x%llu, 408 x%llu, 413 x%llu, 431 x%llu, 503 x%llu, "
            "505 x%llu\n",
            (unsigned long long)h->accepted, (unsigned long long)h->peak_open,
            (unsigned long long)h->requests, (unsigned long long)h->orphaned,
            (unsigned long long)h->bad_request, (unsigned long long)h->timed_out,
            (unsigned long long)h->body_too_large,
            (unsigned long long)h->headers_too_large, (unsigned long long)h->unavailable,
            (unsigned long long)h->bad_version);
}

/* --- Answering --------------------------------------------------------------------- */

static void ch_admit_queued(ld_clearinghouse *ch, uint64_t now);

/* A check's latency is over: answer it, count it, and let the next queued one in. */
static void ch_answer(ld_clearinghouse *ch, ch_check *k, uint64_t now)
{
    ld_clearinghouse_stats *st = &ch->stats;

    if (k->prev)
        k->prev->next = k->next;
    else
        ch->waiting = k->next;
    if (k->next)
        k->next->prev = k->prev;
    ch_in_flight(ch, now, -1);
    int rc = ld_http_respond(k->req, 200, "Content-Type: text/plain\r\n", k->answer,
                             strlen(k->answer));
    if (rc == -ECONNRESET) {
        st->abandoned++;
    } else {
        int64_t ns = (int64_t)(now - k->arrived_ns);
        st->served++;
        st->failed += k->fails;
        ld_hist_add(&ch->latency, (uint64_t)ns);
        if (ns > st->latency_max_ns)
            st->latency_max_ns = ns;
    }
    free(k);
    ch_admit_queued(ch, now);
}

static void ch_on_due(void *item, void *ctx)
{
    ch_answer(ctx, item, uv_hrtime());
}

/* A request the service does not serve: status, the headers given, and why in one
 * line of text. */
static void ch_refuse(ld_clearinghouse *ch, ld_http_request *req, int status,
                      const char *headers, const char *why)
{
    char head[96], body[160];
    int len = snprintf(body, sizeof body, "%s\n", why);

    snprintf(head, sizeof head, "Content-Type: text/plain\r\n%s", headers ? headers : "");
    ch->stats.refused++;
    ld_http_respond(req, status, head, body, (size_t)len < sizeof body ? (size_t)len : 0);
}

/* --- Requests ---------------------------------------------------------------------- */

/* The route of /think, past settle's calls. */
#define CH_THINK LD_SETTLE_CALLS

/* The longest think time /think takes, in ms. */
#define CH_THINK_MAX_MS 60000.0

/* The call a path asks for, CH_THINK, or -1. */
static int ch_route(const char *path)
{
    if (strcmp(path, "/counterparty") == 0)
        return LD_CALL_COUNTERPARTY;
    if (strcmp(path, "/buying-power") == 0)
        return LD_CALL_BUYING_POWER;
    if (strcmp(path, "/shares") == 0)
        return LD_CALL_SHARES;
    if (strcmp(path, "/think") == 0)
        return CH_THINK;
    return -1;
}

/* A whole number in decimal digits, nothing else. */
static int ch_param_u64(const char *query, const char *name, uint64_t *out)
{
    char buf[32], *end;
    int n = ld_http_query_get(query, name, buf, sizeof buf);

    if (n <= 0 || buf[0] < '0' || buf[0] > '9')
        return -EINVAL;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno != 0 || *end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

/* A number within [min, max], the range settle gives the option. */
static int ch_param_real(const char *query, const char *name, double min, double max,
                         double *out)
{
    char buf[64], *end;
    int n = ld_http_query_get(query, name, buf, sizeof buf);

    if (n <= 0)
        return -EINVAL;
    errno = 0;
    double v = strtod(buf, &end);
    if (errno != 0 || *end != '\0' || !(v >= min && v <= max))
        return -EINVAL;
    *out = v;
    return 0;
}

/* The trade and the settle config a query names; a message for the 400 if it does
 * not. */
static int ch_parse(const char *query, ld_trade *t, double *scale, double *fail,
                    uint64_t *seed, char *why, size_t size)
{
    uint64_t id;

    if (ch_param_u64(query, "trade", &id) != 0 ||
        ch_param_u64(query, "seed", seed) != 0) {
        snprintf(why, size, "trade and seed must be whole numbers");
        return -EINVAL;
    }
    if (ch_param_real(query, "scale", LD_SETTLE_SCALE_MIN, LD_SETTLE_SCALE_MAX, scale) !=
            0 ||
        ch_param_real(query, "fail", LD_SETTLE_FAIL_MIN, LD_SETTLE_FAIL_MAX, fail) != 0) {
        snprintf(why, size, "scale must be a number in [%g, %g], fail one in [%g, %g]",
                 (double)LD_SETTLE_SCALE_MIN, (double)LD_SETTLE_SCALE_MAX,
                 (double)LD_SETTLE_FAIL_MIN, (double)LD_SETTLE_FAIL_MAX);
        return -EINVAL;
    }
    ld_book_make(t, 1, id, *seed);
    return 0;
}

/* Start the check's latency now; a deadline already past answers it at once. */
static void ch_admit(ld_clearinghouse *ch, ch_check *k, uint64_t now)
{
    int rc = ld_deadlines_add(ch->deadlines, k, now + (uint64_t)k->latency_ns);

    if (rc < 0) {
        ch_refuse(ch, k->req, 503, NULL, "out of memory");
        free(k);
        return;
    }
    k->prev = NULL;
    k->next = ch->waiting;
    if (ch->waiting)
        ch->waiting->prev = k;
    ch->waiting = k;
    ch_in_flight(ch, now, +1);
    if (rc == 1)
        ch_answer(ch, k, now);
}

/* Queued checks in arrival order, while there is room under the cap; those whose
 * client has gone are dropped on the way. An answer given during an admission comes
 * back here, and the loop already running takes its turn. */
static void ch_admit_queued(ld_clearinghouse *ch, uint64_t now)
{
    if (ch->admitting)
        return;
    ch->admitting = true;
    while (ch->queued && ch->stats.in_flight < ch->max_in_flight) {
        ch_check *k = ch->queued;
        ch->queued = k->next;
        if (!ch->queued)
            ch->queued_last = NULL;
        if (ld_http_request_orphaned(k->req)) {
            ld_http_respond(k->req, 503, NULL, "", 0);
            ch->stats.abandoned++;
            free(k);
        } else {
            ch_admit(ch, k, now);
        }
    }
    ch->admitting = false;
}

/* A check arrives: its latency starts now, or, past the cap, once room is made; its
 * answer is then `answer`. */
static void ch_check_start(ld_clearinghouse *ch, ld_http_request *req, int64_t latency_ns,
                           const char *answer, bool fails, uint64_t now)
{
    ch_check *k = calloc(1, sizeof *k);

    if (!k) {
        ch_refuse(ch, req, 503, NULL, "out of memory");
        return;
    }
    k->req = req;
    k->arrived_ns = now;
    k->latency_ns = latency_ns;
    k->answer = answer;
    k->fails = fails;
    if (ch->max_in_flight == 0 || ch->stats.in_flight < ch->max_in_flight) {
        ch_admit(ch, k, now);
        return;
    }
    if (ch->queued_last)
        ch->queued_last->next = k;
    else
        ch->queued = k;
    ch->queued_last = k;
}

/* GET /think?ms=N: "ok" after N ms, on the same deadlines, cap and stats as a check. */
static void ch_think(ld_clearinghouse *ch, ld_http_request *req, uint64_t now)
{
    char buf[64], *end;
    int n = ld_http_query_get(ld_http_request_query(req), "ms", buf, sizeof buf);
    double ms = -1;

    if (n > 0) {
        errno = 0;
        ms = strtod(buf, &end);
        if (errno != 0 || *end != '\0')
            ms = -1;
    }
    if (!(ms >= 0 && ms <= CH_THINK_MAX_MS)) {
        ch_refuse(ch, req, 400, NULL, "ms must be milliseconds in [0, 60000]");
        return;
    }
    ch_check_start(ch, req, llround(ms * 1e6), "ok\n", false, now);
}

/* Route, parse, plan: everything but the wait. */
static void ch_on_request(ld_http_request *req, void *ctx)
{
    ld_clearinghouse *ch = ctx;
    uint64_t now = uv_hrtime();
    const char *method = ld_http_request_method(req);
    int call = ch_route(ld_http_request_path(req));
    char why[128];
    ld_trade t;
    double scale, fail;
    uint64_t seed;

    if (call < 0) {
        ch_refuse(ch, req, 404, NULL,
                  "the checks are /counterparty, /buying-power, /shares; and /think");
        return;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        ch_refuse(ch, req, 405, "Allow: GET, HEAD\r\n", "a check is a GET");
        return;
    }
    if (call == CH_THINK) {
        ch_think(ch, req, now);
        return;
    }
    if (ch_parse(ld_http_request_query(req), &t, &scale, &fail, &seed, why, sizeof why) !=
        0) {
        ch_refuse(ch, req, 400, NULL, why);
        return;
    }
    ld_settle_plan plan;
    ld_settle_plan_trade(&t, seed, fail, 0, &plan);
    if (plan.ms[call] == 0) {
        ch_refuse(ch, req, 422, NULL, "shares are checked for SELL trades only");
        return;
    }
    ch_check_start(ch, req, ld_settle_call_ns(&plan, call, scale),
                   plan.failed_check == call ? "fail\n" : "pass\n",
                   plan.failed_check == call, now);
}

/* --- On a given loop --------------------------------------------------------------- */

int ld_clearinghouse_open(ld_clearinghouse **out, uv_loop_t *loop,
                          const struct sockaddr *addr, const ld_http_limits *limits)
{
    ld_clearinghouse *ch = calloc(1, sizeof *ch);

    if (!ch)
        return -ENOMEM;
    int rc = ld_deadlines_open(&ch->deadlines, loop, ch_on_due, ch);
    if (rc != 0) {
        free(ch);
        return rc;
    }
    rc = ld_http_server_open(&ch->server, loop, addr, limits, ch_on_request, ch);
    if (rc != 0) {
        ld_deadlines_close(ch->deadlines);
        free(ch);
        return rc;
    }
    *out = ch;
    return 0;
}

int ld_clearinghouse_port(const ld_clearinghouse *ch)
{
    return ld_http_server_port(ch->server);
}

void ld_clearinghouse_set_max_in_flight(ld_clearinghouse *ch, uint64_t max_in_flight)
{
    ch->max_in_flight = max_in_flight;
    ch_admit_queued(ch, uv_hrtime());
}

/* Drop a list of checks, answering each so that its request is freed. */
static void ch_drop(ch_check *k)
{
    while (k) {
        ch_check *next = k->next;
        ld_http_respond(k->req, 503, NULL, "", 0);
        free(k);
        k = next;
    }
}

/* The server goes first, so that every waiting or queued check's request is orphaned
 * and the answer below only frees it. */
void ld_clearinghouse_close(ld_clearinghouse *ch)
{
    ld_http_server_close(ch->server);
    ch_drop(ch->waiting);
    ch_drop(ch->queued);
    ld_deadlines_close(ch->deadlines);
    free(ch);
}

/* --- On a thread of its own -------------------------------------------------------- */

struct ld_clearinghouse_thread {
    pthread_t thread;
    uv_loop_t loop;
    uv_async_t stop, window;
    uv_sem_t ready, windowed;
    ld_clearinghouse *ch;
    struct sockaddr_storage addr;
    ld_http_limits limits;
    uint64_t max_in_flight;
    int rc;   /* ld_clearinghouse_open's */
    int port; /* once it listens */
    ld_clearinghouse_stats last;
};

/* On the thread: read the stats, close, and let the loop run dry. */
static void ch_on_stop(uv_async_t *a)
{
    ld_clearinghouse_thread *t = a->data;

    ld_clearinghouse_stats_get(t->ch, &t->last);
    ld_clearinghouse_close(t->ch);
    uv_close((uv_handle_t *)&t->stop, NULL);
    uv_close((uv_handle_t *)&t->window, NULL);
}

/* On the thread: the window's stats for ld_clearinghouse_thread_window, and the next
 * window begins. */
static void ch_on_window(uv_async_t *a)
{
    ld_clearinghouse_thread *t = a->data;

    ld_clearinghouse_stats_get(t->ch, &t->last);
    ld_clearinghouse_stats_restart(t->ch);
    uv_sem_post(&t->windowed);
}

/* The thread's two wake-ups; the second is closed again if it cannot be made. */
static int ch_asyncs_init(ld_clearinghouse_thread *t)
{
    int rc = uv_async_init(&t->loop, &t->stop, ch_on_stop);

    if (rc != 0)
        return rc;
    rc = uv_async_init(&t->loop, &t->window, ch_on_window);
    if (rc != 0)
        uv_close((uv_handle_t *)&t->stop, NULL);
    return rc;
}

/* Open on the thread's own loop, say how that went, and serve until stopped. SIGPIPE
 * is blocked here, so that a write to a client that has gone fails with -EPIPE
 * whatever the process does with the signal. */
static void *ch_thread_main(void *arg)
{
    ld_clearinghouse_thread *t = arg;
    sigset_t sigpipe;

    sigemptyset(&sigpipe);
    sigaddset(&sigpipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe, NULL);
    t->rc = ch_asyncs_init(t);
    if (t->rc == 0) {
        t->rc = ld_clearinghouse_open(&t->ch, &t->loop, (struct sockaddr *)&t->addr,
                                      &t->limits);
        if (t->rc != 0) {
            uv_close((uv_handle_t *)&t->stop, NULL);
            uv_close((uv_handle_t *)&t->window, NULL);
        }
    }
    if (t->rc == 0) {
        ld_clearinghouse_set_max_in_flight(t->ch, t->max_in_flight);
        t->port = ld_clearinghouse_port(t->ch);
    }
    uv_sem_post(&t->ready);
    uv_run(&t->loop, UV_RUN_DEFAULT);
    return NULL;
}

static size_t ch_addr_len(const struct sockaddr *addr)
{
    return addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                       : sizeof(struct sockaddr_in);
}

int ld_clearinghouse_start(ld_clearinghouse_thread **out, const struct sockaddr *addr,
                           const ld_http_limits *limits, uint64_t max_in_flight)
{
    ld_clearinghouse_thread *t = calloc(1, sizeof *t);

    if (!t)
        return -ENOMEM;
    memcpy(&t->addr, addr, ch_addr_len(addr));
    if (limits)
        t->limits = *limits;
    t->max_in_flight = max_in_flight;
    t->stop.data = t->window.data = t;
    int rc = uv_loop_init(&t->loop);
    if (rc != 0) {
        free(t);
        return rc;
    }
    uv_sem_init(&t->ready, 0);
    uv_sem_init(&t->windowed, 0);
    rc = -pthread_create(&t->thread, NULL, ch_thread_main, t);
    if (rc == 0) {
        uv_sem_wait(&t->ready);
        rc = t->rc;
        if (rc != 0)
            pthread_join(t->thread, NULL);
    }
    if (rc != 0) {
        uv_sem_destroy(&t->ready);
        uv_sem_destroy(&t->windowed);
        uv_loop_close(&t->loop);
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int ld_clearinghouse_thread_port(const ld_clearinghouse_thread *t)
{
    return t->port;
}

void ld_clearinghouse_thread_window(ld_clearinghouse_thread *t,
                                    ld_clearinghouse_stats *out)
{
    uv_async_send(&t->window);
    uv_sem_wait(&t->windowed);
    *out = t->last;
}

void ld_clearinghouse_stop(ld_clearinghouse_thread *t, ld_clearinghouse_stats *out)
{
    uv_async_send(&t->stop);
    pthread_join(t->thread, NULL);
    if (out)
        *out = t->last;
    uv_sem_destroy(&t->ready);
    uv_sem_destroy(&t->windowed);
    uv_loop_close(&t->loop);
    free(t);
}
