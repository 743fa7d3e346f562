/* test_http_plan.c: the clearinghouse answers every trade's checks with the outcome
 * sleep mode records for that trade, never before the call's planned latency.
 *
 * Settle's threads strategy (blocking sleeps) runs in process over 300 trades of a
 * book, at latency scale 0.01 and fail rate 0.1 so that about a fifth of the trades
 * fail; its results are the statuses and failed checks to match. The clearinghouse
 * runs on a thread of its own on 127.0.0.1 and a free port; four keep-alive
 * connections each carry one trade at a time, its calls pipelined (shares for SELL
 * trades only), and the first "fail" names the failed check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "clearinghouse.h"
#include "client.h"
#include "metrics.h"
#include "settle.h"

#define TRADES 300
#define CONNS 4
#define SEED 20240601u
#define SCALE 0.01
#define FAIL 0.1

static const char *const call_path[LD_SETTLE_CALLS] = {
    [LD_CALL_COUNTERPARTY] = "/counterparty",
    [LD_CALL_BUYING_POWER] = "/buying-power",
    [LD_CALL_SHARES] = "/shares",
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleep mode's results for the book's first TRADES trades, and their plans. */
static int sleep_mode(const ld_trade *trades, const ld_settle_config *sc,
                      ld_settle_result *results, ld_settle_prepared **prep)
{
    ld_job_config cfg = {.seed = SEED, .slow_factor = 1, .opts = sc};
    const ld_strategy *threads = ld_job_strategy(&ld_settle_job, "threads");
    void *prepared;
    int64_t bound;
    ld_metrics m;

    if (!threads || ld_settle_job.prepare(&cfg, trades, TRADES, &prepared, &bound) != 0)
        return -1;
    *prep = prepared;
    return ld_job_measure(&ld_settle_job, threads, &cfg, trades, TRADES, prepared,
                          results, &m, NULL);
}

typedef struct pending {
    size_t trade;
    int calls[3];
    int n;
    int64_t sent_ns;
} pending;

/* Send trade t's calls on c, pipelined, from now. */
static void send_trade(test_conn *c, const ld_trade *t, pending *p)
{
    char target[256];

    p->n = 0;
    p->sent_ns = now_ns();
    for (int call = LD_CALL_COUNTERPARTY; call <= LD_CALL_SHARES; call++) {
        if (call == LD_CALL_SHARES && t->side != LD_SELL)
            continue;
        snprintf(target, sizeof target,
                 "%s?trade=%" PRIu64 "&seed=%u&scale=%.17g&fail=%.17g", call_path[call],
                 t->id, SEED, SCALE, FAIL);
        p->calls[p->n++] = call;
        test_get(c, target, NULL);
    }
}

/* Read trade p's answers: each 200, none before its planned latency; the first fail
 * is the failed check. Returns the number of fails. */
static int read_trade(test_conn *c, const pending *p, const ld_settle_plan *plan,
                      double scale, const ld_settle_result *slept)
{
    int failed_check = -1, fails = 0;

    for (int k = 0; k < p->n; k++) {
        int call = p->calls[k];
        int rc = test_response(c);
        int64_t took = now_ns() - p->sent_ns;
        CHECK(rc == 1 && c->status == 200, "trade %zu call %d: %d %d", p->trade, call, rc,
              c->status);
        int64_t planned = ld_settle_call_ns(plan, call, scale);
        CHECK(took >= planned,
              "trade %zu call %d answered after %" PRId64 " ns, planned %" PRId64,
              p->trade, call, took, planned);
        int fail = strcmp(c->body, "fail\n") == 0;
        CHECK(fail || strcmp(c->body, "pass\n") == 0, "body '%s'", c->body);
        if (fail && failed_check < 0)
            failed_check = call;
        fails += fail;
    }
    uint8_t status = failed_check < 0 ? LD_SETTLED : LD_FAILED;
    CHECK(status == slept->status && failed_check == slept->failed_check,
          "trade %zu: status %d check %d over HTTP, %d %d in sleep mode", p->trade,
          status, failed_check, slept->status, slept->failed_check);
    return fails;
}

/* Two refusals: shares of a BUY trade, and a query short of a parameter. */
static void refusals(int port, const ld_trade *trades)
{
    test_conn c;
    char target[256];
    size_t buy = 0;

    while (buy < TRADES && trades[buy].side != LD_BUY)
        buy++;
    CHECK(test_connect(&c, port) == 0, "connect");
    snprintf(target, sizeof target, "/shares?trade=%" PRIu64 "&seed=%u&scale=1&fail=0",
             trades[buy].id, SEED);
    test_get(&c, target, NULL);
    CHECK(test_response(&c) == 1 && c.status == 422, "shares of a BUY: %d", c.status);
    test_get(&c, "/counterparty?trade=1&seed=2&scale=1", NULL);
    CHECK(test_response(&c) == 1 && c.status == 400, "no fail rate: %d", c.status);
    test_close(&c, 0);
}

static void check_stats(const ld_clearinghouse_stats *st, uint64_t calls, uint64_t fails,
                        int64_t longest)
{
    CHECK(st->served == calls && st->failed == fails,
          "served %" PRIu64 " (%" PRIu64 " failed), expected %" PRIu64 " (%" PRIu64 ")",
          st->served, st->failed, calls, fails);
    CHECK(st->refused == 2 && st->abandoned == 0 && st->in_flight == 0,
          "refused %" PRIu64 ", abandoned %" PRIu64 ", in flight %" PRIu64, st->refused,
          st->abandoned, st->in_flight);
    CHECK(st->peak_in_flight >= 2 && st->mean_in_flight > 0,
          "in flight: peak %" PRIu64 ", mean %f", st->peak_in_flight, st->mean_in_flight);
    CHECK(st->latency_p50_ns > 0 && st->latency_p50_ns <= st->latency_p90_ns &&
              st->latency_p90_ns <= st->latency_p99_ns &&
              st->latency_p99_ns <= st->latency_max_ns && st->latency_max_ns >= longest,
          "latencies %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
          ", longest planned %" PRId64,
          st->latency_p50_ns, st->latency_p90_ns, st->latency_p99_ns, st->latency_max_ns,
          longest);
    CHECK(st->http.requests == calls + 2 && st->http.accepted == CONNS + 1,
          "%" PRIu64 " requests on %" PRIu64 " connections", st->http.requests,
          st->http.accepted);
}

int main(void)
{
    static ld_trade trades[TRADES];
    static ld_settle_result slept[TRADES];
    ld_settle_config sc = {
        .latency_scale = SCALE, .fail_rate = FAIL, .pin_fraction = 0, .os_threads = 32};
    ld_settle_prepared *prep = NULL;
    struct sockaddr_in addr;
    ld_clearinghouse_thread *ch;
    test_conn conn[CONNS];
    pending p[CONNS];
    uint64_t calls = 0, fails = 0;
    int64_t longest = 0;

    ld_book_make(trades, TRADES, 0, SEED);
    if (sleep_mode(trades, &sc, slept, &prep) != 0) {
        fprintf(stderr, "test_http_plan: sleep mode did not run\n");
        return 1;
    }
    uv_ip4_addr("127.0.0.1", 0, &addr);
    int rc = ld_clearinghouse_start(&ch, (struct sockaddr *)&addr, NULL, 0);
    if (rc != 0) {
        fprintf(stderr, "test_http_plan: the clearinghouse did not start: %d\n", rc);
        return 1;
    }
    int port = ld_clearinghouse_thread_port(ch);
    for (int k = 0; k < CONNS; k++)
        CHECK(test_connect(&conn[k], port) == 0, "connect %d", k);
    for (size_t base = 0; base < TRADES; base += CONNS) {
        for (int k = 0; k < CONNS && base + (size_t)k < TRADES; k++) {
            p[k].trade = base + (size_t)k;
            send_trade(&conn[k], &trades[p[k].trade], &p[k]);
        }
        for (int k = 0; k < CONNS && base + (size_t)k < TRADES; k++) {
            const ld_settle_plan *plan = &prep->plans[p[k].trade];
            fails += (uint64_t)read_trade(&conn[k], &p[k], plan, prep->scale,
                                          &slept[p[k].trade]);
            calls += (uint64_t)p[k].n;
            for (int j = 0; j < p[k].n; j++) {
                int64_t planned = ld_settle_call_ns(plan, p[k].calls[j], prep->scale);
                if (planned > longest)
                    longest = planned;
            }
        }
    }
    for (int k = 0; k < CONNS; k++)
        test_close(&conn[k], 0);
    refusals(port, trades);
    ld_clearinghouse_stats st;
    ld_clearinghouse_stop(ch, &st);
    ld_clearinghouse_print(&st, stdout);
    check_stats(&st, calls, fails, longest);
    ld_settle_job.release(prep);
    printf("%d trades, %" PRIu64 " checks, %" PRIu64 " failed: %s\n", TRADES, calls,
           fails, failures ? "FAILED" : "as sleep mode");
    return failures != 0;
}
