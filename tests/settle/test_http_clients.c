/* test_http_clients.c: the three clients of http_client.h against a clearinghouse on
 * 127.0.0.1, and the clearinghouse's cap and stats windows.
 *
 * - Each transport makes every check of a few dozen trades, and the first "fail" is
 *   the check the trade's plan names: the blocking client on one connection, the
 *   green connections from 8 green threads and the libuv ones from 8 chains of
 *   callbacks, each opening exactly one connection per request under way at once.
 * - A connection the server closed while it sat idle (a short request timeout) is
 *   replaced, and the request still answered.
 * - A refused connect is -ECONNREFUSED on every transport.
 * - Under a cap of 2 checks in flight, 6 checks at once are answered, never more than
 *   2 in flight, in no less than half the sum of their latencies; each stats window
 *   counts its own checks only.
 * - A server that takes connections and never answers fails a request on every
 *   transport with -ETIMEDOUT at the client's deadline.
 * - Under a cap of 1, checks queued by clients that then reset are dropped when their
 *   turn comes: a live client queued behind them is answered as soon as the slot
 *   frees, not after their 5 s each.
 * An alarm turns a hang into a failure.
 */
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clearinghouse.h"
#include "gt.h"
#include "http_client.h"
#include "settle.h"

#define TRADES 48
#define CHAINS 8
#define SEED 7u
#define FAIL 0.2
#define MS 1000000ll

static const char *const call_path[LD_SETTLE_CALLS] = {
    [LD_CALL_COUNTERPARTY] = "/counterparty",
    [LD_CALL_BUYING_POWER] = "/buying-power",
    [LD_CALL_SHARES] = "/shares",
};

static ld_trade trades[TRADES];
static struct sockaddr_in server;
static char host[64];
static uint64_t green_timeout_ns; /* what run_green's connections are opened with */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The check `call` of trade t at latency scale `scale`. */
static void target(char *out, size_t size, const ld_trade *t, int call, double scale)
{
    snprintf(out, size, "%s?trade=%" PRIu64 "&seed=%u&scale=%.17g&fail=%.17g",
             call_path[call], t->id, SEED, scale, FAIL);
}

/* The plan sleep mode draws for trade t. */
static void plan_of(const ld_trade *t, ld_settle_plan *plan)
{
    ld_settle_plan_trade(t, SEED, FAIL, 0, plan);
}

/* The checks trade t makes, in order: shares for SELL only. */
static int next_check(const ld_trade *t, int after)
{
    int call = after + 1;
    if (call == LD_CALL_SHARES && t->side != LD_SELL)
        call++;
    return call <= LD_CALL_SHARES ? call : -1;
}

/* One reply to one check: 1 fail, 0 pass, -1 anything else. */
static int outcome(int rc, const ld_http_reply *r)
{
    if (rc != 0 || r->status != 200)
        return -1;
    if (strcmp(r->body, "fail\n") == 0)
        return 1;
    return strcmp(r->body, "pass\n") == 0 ? 0 : -1;
}

/* Trade i's failed check, from its replies, against its plan's. */
static void check_trade(const char *who, size_t i, int failed_check)
{
    ld_settle_plan plan;
    plan_of(&trades[i], &plan);
    CHECK(failed_check == plan.failed_check, "%s: trade %zu failed check %d, planned %d",
          who, i, failed_check, plan.failed_check);
}

static ld_clearinghouse_thread *start(const ld_http_limits *limits, uint64_t cap)
{
    ld_clearinghouse_thread *ch = NULL;
    struct sockaddr_in any;
    uv_ip4_addr("127.0.0.1", 0, &any);
    int rc = ld_clearinghouse_start(&ch, (struct sockaddr *)&any, limits, cap);
    CHECK(rc == 0, "the clearinghouse did not start: %d", rc);
    if (rc != 0)
        exit(1);
    uv_ip4_addr("127.0.0.1", ld_clearinghouse_thread_port(ch), &server);
    snprintf(host, sizeof host, "127.0.0.1:%d", ld_clearinghouse_thread_port(ch));
    return ch;
}

/* --- Blocking --------------------------------------------------------------------- */

static void test_blocking(void)
{
    ld_clearinghouse_thread *ch = start(NULL, 0);
    ld_http_conn *c;
    ld_http_reply r;
    char t[256];
    uint64_t calls = 0;

    CHECK(ld_http_conn_open(&c, (struct sockaddr *)&server, host, 0) == 0, "open");
    for (size_t i = 0; i < TRADES; i++) {
        int failed = -1;
        for (int call = next_check(&trades[i], 0); call > 0;
             call = next_check(&trades[i], call)) {
            target(t, sizeof t, &trades[i], call, 0.01);
            int o = outcome(ld_http_conn_get(c, t, &r), &r);
            CHECK(o >= 0, "blocking: trade %zu call %d", i, call);
            failed = o == 1 && failed < 0 ? call : failed;
            calls++;
        }
        check_trade("blocking", i, failed);
    }
    ld_http_conn_close(c);
    ld_clearinghouse_stats st;
    ld_clearinghouse_stop(ch, &st);
    CHECK(st.served == calls && st.http.accepted == 1,
          "blocking: %" PRIu64 " served of %" PRIu64 " on %" PRIu64 " connections",
          st.served, calls, st.http.accepted);
}

/* --- Green ------------------------------------------------------------------------ */

typedef struct green_chain {
    ld_http_conns *conns;
    unsigned first;
    int errors;
} green_chain;

/* Trades first, first + CHAINS, ...: every check of each, one after another. */
static void green_trades(void *arg)
{
    green_chain *g = arg;
    ld_http_reply r;
    char t[256];

    for (size_t i = g->first; i < TRADES; i += CHAINS) {
        int failed = -1;
        for (int call = next_check(&trades[i], 0); call > 0;
             call = next_check(&trades[i], call)) {
            target(t, sizeof t, &trades[i], call, 0.01);
            int o = outcome(ld_http_conns_get(g->conns, t, &r), &r);
            g->errors += o < 0;
            failed = o == 1 && failed < 0 ? call : failed;
        }
        check_trade("green", i, failed);
    }
}

/* Run fn(arg[k]) for each of n green threads on a scheduler of this thread's, with
 * a set of connections open for them, closed after. */
static void run_green(ld_gt_fn fn, green_chain *chains, unsigned n)
{
    ld_sched *s;
    ld_http_conns *conns;
    CHECK(ld_sched_create(&s, NULL) == 0, "sched");
    CHECK(ld_http_conns_open(&conns, (struct sockaddr *)&server, host,
                             green_timeout_ns) == 0,
          "conns");
    for (unsigned k = 0; k < n; k++) {
        chains[k].conns = conns;
        CHECK(ld_gt_spawn(s, fn, &chains[k], NULL) == 0, "spawn");
    }
    CHECK(ld_sched_run(s) == 0, "run");
    ld_http_conns_close(conns);
    ld_sched_destroy(s);
}

static void test_green(void)
{
    ld_clearinghouse_thread *ch = start(NULL, 0);
    green_chain chains[CHAINS] = {0};
    for (unsigned k = 0; k < CHAINS; k++)
        chains[k].first = k;
    run_green(green_trades, chains, CHAINS);
    for (unsigned k = 0; k < CHAINS; k++)
        CHECK(chains[k].errors == 0, "green: chain %u: %d errors", k, chains[k].errors);
    ld_clearinghouse_stats st;
    ld_clearinghouse_stop(ch, &st);
    CHECK(st.http.accepted == CHAINS, "green: %" PRIu64 " connections for %d chains",
          st.http.accepted, CHAINS);
}

/* --- libuv ------------------------------------------------------------------------ */

typedef struct uv_chain {
    ld_http_uv_conns *conns;
    size_t trade;
    int call, failed, errors;
} uv_chain;

static void uv_next(uv_chain *u);

static void uv_done(void *arg, int rc, const ld_http_reply *reply)
{
    uv_chain *u = arg;
    int o = reply ? outcome(rc, reply) : -1;
    u->errors += o < 0;
    u->failed = o == 1 && u->failed < 0 ? u->call : u->failed;
    uv_next(u);
}

/* The chain's next check, moving on to its next trade when one is done. */
static void uv_next(uv_chain *u)
{
    char t[256];
    while (u->trade < TRADES) {
        u->call = next_check(&trades[u->trade], u->call);
        if (u->call > 0)
            break;
        check_trade("uv", u->trade, u->failed);
        u->trade += CHAINS;
        u->call = 0;
        u->failed = -1;
    }
    if (u->trade >= TRADES)
        return;
    target(t, sizeof t, &trades[u->trade], u->call, 0.01);
    int rc = ld_http_uv_get(u->conns, t, uv_done, u);
    CHECK(rc == 0, "uv: get: %d", rc);
}

static void test_uv(void)
{
    ld_clearinghouse_thread *ch = start(NULL, 0);
    uv_loop_t loop;
    ld_http_uv_conns *conns;
    uv_chain chains[CHAINS];

    uv_loop_init(&loop);
    CHECK(ld_http_uv_conns_open(&conns, &loop, (struct sockaddr *)&server, host, 0) == 0,
          "conns");
    for (unsigned k = 0; k < CHAINS; k++) {
        chains[k] = (uv_chain){.conns = conns, .trade = k, .failed = -1};
        uv_next(&chains[k]);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    for (unsigned k = 0; k < CHAINS; k++)
        CHECK(chains[k].errors == 0 && chains[k].trade >= TRADES, "uv: chain %u", k);
    ld_http_uv_conns_close(conns);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0, "uv: handles left on the loop");
    ld_clearinghouse_stats st;
    ld_clearinghouse_stop(ch, &st);
    CHECK(st.http.accepted == CHAINS, "uv: %" PRIu64 " connections for %d chains",
          st.http.accepted, CHAINS);
}

/* --- Stale connections ------------------------------------------------------------- */

#define IDLE_MS 40 /* the server's request timeout: an idle connection goes after it */

static const ld_http_limits short_idle = {.request_timeout_ms = IDLE_MS};

/* Two checks, with the server's idle timeout between them. */
static void stale_pair(void *arg)
{
    green_chain *g = arg;
    ld_http_reply r;
    char t[256];
    target(t, sizeof t, &trades[0], LD_CALL_COUNTERPARTY, 0.01);
    g->errors += outcome(ld_http_conns_get(g->conns, t, &r), &r) < 0;
    ld_gt_sleep_ns((uint64_t)(4 * IDLE_MS * MS));
    g->errors += outcome(ld_http_conns_get(g->conns, t, &r), &r) < 0;
}

typedef struct uv_stale {
    ld_http_uv_conns *conns;
    uv_timer_t timer;
    int replies, errors;
} uv_stale;

static void uv_stale_get(uv_timer_t *timer);

static void uv_stale_done(void *arg, int rc, const ld_http_reply *reply)
{
    uv_stale *u = arg;
    u->errors += reply ? outcome(rc, reply) < 0 : 1;
    if (++u->replies == 1)
        uv_timer_start(&u->timer, uv_stale_get, 4 * IDLE_MS, 0);
    else
        uv_close((uv_handle_t *)&u->timer, NULL);
}

static void uv_stale_get(uv_timer_t *timer)
{
    uv_stale *u = timer->data;
    char t[256];
    target(t, sizeof t, &trades[0], LD_CALL_COUNTERPARTY, 0.01);
    CHECK(ld_http_uv_get(u->conns, t, uv_stale_done, u) == 0, "uv stale: get");
}

static void test_stale(void)
{
    ld_clearinghouse_thread *ch = start(&short_idle, 0);
    ld_clearinghouse_stats st;
    ld_http_reply r;
    char t[256];

    target(t, sizeof t, &trades[0], LD_CALL_COUNTERPARTY, 0.01);
    ld_http_conn *c;
    CHECK(ld_http_conn_open(&c, (struct sockaddr *)&server, host, 0) == 0, "open");
    CHECK(outcome(ld_http_conn_get(c, t, &r), &r) >= 0, "blocking: first");
    usleep(4 * IDLE_MS * 1000);
    CHECK(outcome(ld_http_conn_get(c, t, &r), &r) >= 0, "blocking: after idle");
    ld_http_conn_close(c);

    green_chain g = {0};
    run_green(stale_pair, &g, 1);
    CHECK(g.errors == 0, "green: %d errors after idle", g.errors);

    uv_loop_t loop;
    uv_stale u = {0};
    uv_loop_init(&loop);
    CHECK(ld_http_uv_conns_open(&u.conns, &loop, (struct sockaddr *)&server, host, 0) ==
              0,
          "uv conns");
    uv_timer_init(&loop, &u.timer);
    u.timer.data = &u;
    uv_stale_get(&u.timer);
    uv_run(&loop, UV_RUN_DEFAULT);
    ld_http_uv_conns_close(u.conns);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    CHECK(u.replies == 2 && u.errors == 0, "uv: %d replies, %d errors after idle",
          u.replies, u.errors);

    ld_clearinghouse_stop(ch, &st);
    CHECK(st.served == 6 && st.http.accepted == 6,
          "stale: %" PRIu64 " served on %" PRIu64 " connections, not 6 on 6", st.served,
          st.http.accepted);
}

/* --- Refused ----------------------------------------------------------------------- */

static void refused_green(void *arg)
{
    green_chain *g = arg;
    ld_http_reply r;
    g->errors = ld_http_conns_get(g->conns, "/counterparty", &r);
}

static void refused_uv(void *arg, int rc, const ld_http_reply *reply)
{
    (void)reply;
    *(int *)arg = rc;
}

static void test_refused(void)
{
    ld_clearinghouse_thread *ch = start(NULL, 0);
    ld_clearinghouse_stop(ch, NULL); /* its port is now free, and refuses */
    ld_http_reply r;

    ld_http_conn *c;
    CHECK(ld_http_conn_open(&c, (struct sockaddr *)&server, host, 0) == 0, "open");
    int rc = ld_http_conn_get(c, "/counterparty", &r);
    CHECK(rc == -ECONNREFUSED, "blocking: %d", rc);
    ld_http_conn_close(c);

    green_chain g = {0};
    run_green(refused_green, &g, 1);
    CHECK(g.errors == -ECONNREFUSED, "green: %d", g.errors);

    uv_loop_t loop;
    ld_http_uv_conns *conns;
    rc = 1;
    uv_loop_init(&loop);
    CHECK(ld_http_uv_conns_open(&conns, &loop, (struct sockaddr *)&server, host, 0) == 0,
          "uv conns");
    CHECK(ld_http_uv_get(conns, "/counterparty", refused_uv, &rc) == 0, "uv get");
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(rc == -ECONNREFUSED, "uv: %d", rc);
    ld_http_uv_conns_close(conns);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
}

/* --- The clearinghouse's cap and windows ---------------------------------------------
 */

#define CAP 2
#define CAPPED 6
#define CAP_SCALE 0.1

static void capped_check(void *arg)
{
    green_chain *g = arg;
    ld_http_reply r;
    char t[256];
    target(t, sizeof t, &trades[g->first], LD_CALL_COUNTERPARTY, CAP_SCALE);
    g->errors = outcome(ld_http_conns_get(g->conns, t, &r), &r) < 0;
}

static void test_cap(void)
{
    ld_clearinghouse_thread *ch = start(NULL, CAP);
    ld_clearinghouse_stats st;
    green_chain g[CAPPED] = {0};
    int64_t sum = 0;

    for (unsigned k = 0; k < CAPPED; k++) {
        ld_settle_plan plan;
        plan_of(&trades[k], &plan);
        sum += ld_settle_call_ns(&plan, LD_CALL_COUNTERPARTY, CAP_SCALE);
        g[k].first = k;
    }
    ld_clearinghouse_thread_window(ch, &st);
    CHECK(st.served == 0, "a window before any check: %" PRIu64, st.served);
    int64_t t0 = now_ns();
    run_green(capped_check, g, CAPPED);
    int64_t took = now_ns() - t0;
    for (unsigned k = 0; k < CAPPED; k++)
        CHECK(g[k].errors == 0, "cap: check %u", k);
    ld_clearinghouse_thread_window(ch, &st);
    CHECK(st.served == CAPPED && st.peak_in_flight == CAP && st.http.accepted == CAPPED,
          "cap: %" PRIu64 " served, peak %" PRIu64 " in flight, %" PRIu64 " connections",
          st.served, st.peak_in_flight, st.http.accepted);
    CHECK(took >= sum / CAP, "cap: %" PRId64 " ns for %" PRId64 " ns of checks on %d",
          took, sum, CAP);
    CHECK(st.mean_in_flight > 1 && st.mean_in_flight <= CAP, "cap: mean in flight %.2f",
          st.mean_in_flight);
    ld_clearinghouse_thread_window(ch, &st);
    CHECK(st.served == 0 && st.http.accepted == 0 && st.peak_in_flight == 0,
          "an empty window: %" PRIu64 " served, %" PRIu64 " connections", st.served,
          st.http.accepted);
    ld_clearinghouse_stop(ch, NULL);
}

/* --- Deadlines ------------------------------------------------------------------- */

#define DEADLINE_MS 200

/* A request's time from start to -ETIMEDOUT: at its deadline, give or take a loaded
 * machine. */
static void check_deadline(const char *who, int rc, int64_t took)
{
    CHECK(rc == -ETIMEDOUT, "%s: %d, not -ETIMEDOUT", who, rc);
    CHECK(took >= (DEADLINE_MS - 5) * MS && took < 10 * DEADLINE_MS * MS,
          "%s: failed after %" PRId64 " ms, the deadline %d ms", who, took / 1000000,
          DEADLINE_MS);
}

/* A socket that listens on 127.0.0.1 and is never served: the kernel completes the
 * connects, nobody answers. server and host then name it. */
static int stalled_server(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    uv_ip4_addr("127.0.0.1", 0, &a);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
              listen(fd, 64) == 0 &&
              getsockname(fd, (struct sockaddr *)&server, &len) == 0,
          "the stalled server");
    snprintf(host, sizeof host, "127.0.0.1:%d", ntohs(server.sin_port));
    return fd;
}

static void test_deadline(void)
{
    int fd = stalled_server();
    const uint64_t timeout = DEADLINE_MS * MS;
    ld_http_reply r;

    ld_http_conn *c;
    CHECK(ld_http_conn_open(&c, (struct sockaddr *)&server, host, timeout) == 0, "open");
    int64_t t0 = now_ns();
    int rc = ld_http_conn_get(c, "/counterparty", &r);
    check_deadline("blocking", rc, now_ns() - t0);
    ld_http_conn_close(c);

    green_chain g = {0};
    green_timeout_ns = timeout;
    t0 = now_ns();
    run_green(refused_green, &g, 1);
    check_deadline("green", g.errors, now_ns() - t0);
    green_timeout_ns = 0;

    uv_loop_t loop;
    ld_http_uv_conns *conns;
    rc = 1;
    uv_loop_init(&loop);
    CHECK(ld_http_uv_conns_open(&conns, &loop, (struct sockaddr *)&server, host,
                                timeout) == 0,
          "uv conns");
    t0 = now_ns();
    CHECK(ld_http_uv_get(conns, "/counterparty", refused_uv, &rc) == 0, "uv get");
    uv_run(&loop, UV_RUN_DEFAULT);
    check_deadline("uv", rc, now_ns() - t0);
    ld_http_uv_conns_close(conns);
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(uv_loop_close(&loop) == 0, "uv: handles left on the loop");
    close(fd);
}

/* --- Checks abandoned in the queue -------------------------------------------------- */

#define ABANDONED 4

/* A raw connection to the clearinghouse that has sent request. */
static int send_raw(const char *request)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int ok = fd >= 0 && connect(fd, (struct sockaddr *)&server, sizeof server) == 0 &&
             write(fd, request, strlen(request)) == (ssize_t)strlen(request);
    CHECK(ok, "a raw request");
    return fd;
}

/* Whether fd's response, within ms, is a 200. */
static int answered_within(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char buf[256];
    ssize_t n = poll(&p, 1, ms) == 1 ? read(fd, buf, sizeof buf - 1) : -1;
    buf[n > 0 ? n : 0] = '\0';
    return strncmp(buf, "HTTP/1.1 200 ", 13) == 0;
}

static void test_abandoned(void)
{
    ld_clearinghouse_thread *ch = start(NULL, 1);
    ld_clearinghouse_stats st;
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    int gone[ABANDONED];

    int first = send_raw("GET /think?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n");
    usleep(50 * 1000);
    for (int i = 0; i < ABANDONED; i++)
        gone[i] = send_raw("GET /think?ms=5000 HTTP/1.1\r\nHost: t\r\n\r\n");
    usleep(50 * 1000);
    for (int i = 0; i < ABANDONED; i++) {
        setsockopt(gone[i], SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        close(gone[i]);
    }
    int live = send_raw("GET /think?ms=0 HTTP/1.1\r\nHost: t\r\n\r\n");
    CHECK(answered_within(first, 3000), "abandoned: the first check");
    CHECK(answered_within(live, 3000),
          "abandoned: a live check queued behind %d abandoned ones waited past 3 s",
          ABANDONED);
    close(first);
    close(live);
    ld_clearinghouse_stop(ch, &st);
    CHECK(st.abandoned == ABANDONED && st.served == 2,
          "abandoned: %" PRIu64 " abandoned, %" PRIu64 " served", st.abandoned,
          st.served);
}

int main(void)
{
    alarm(60);
    ld_book_make(trades, TRADES, 0, SEED);
    test_blocking();
    test_green();
    test_uv();
    test_stale();
    test_refused();
    test_cap();
    test_deadline();
    test_abandoned();
    if (failures == 0)
        printf("http clients: blocking, green and libuv clients as sleep mode, stale "
               "connections replaced, refusals and deadlines reported; the cap and "
               "windows hold, abandoned checks leave the queue\n");
    return failures != 0;
}
