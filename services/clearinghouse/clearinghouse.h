/* clearinghouse.h: settle's three checks as an HTTP service, each answered after the
 * latency, and with the outcome, that sleep mode waits out for the same trade; and a
 * backend with think time for the pool job.
 *
 * Endpoints, GET (or HEAD) only:
 *
 *   /counterparty?trade=ID&seed=S&scale=X&fail=P
 *   /buying-power?trade=ID&seed=S&scale=X&fail=P
 *   /shares?trade=ID&seed=S&scale=X&fail=P         (SELL trades only)
 *   /think?ms=N                                     (N a real number in [0, 60000])
 *
 * /think is answered 200 "ok\n" N ms after its arrival, on the same deadlines and under
 * the same cap as a check, and counted as one in the stats (served, latency, in
 * flight); a missing or bad ms is 400.
 *
 * trade is the trade's id and seed the book's (--seed), which between them give the
 * trade (ld_book_make) and its side; scale is the latency scale, settle's
 * --latency-scale times any slow factor, and fail is --fail-rate, each within settle's
 * range for that option; print them round-trip exact ("%.17g") so that the service
 * draws the very plan sleep mode draws (ld_settle_plan_trade). All four are required.
 *
 * The answer is 200, text/plain, after the call's planned latency, counted from the
 * request's arrival: "pass\n", or "fail\n" for the check the plan names as the trade's
 * failed check. A client that makes a trade's calls (shares for SELL only) and takes
 * the first "fail" as the failed check has sleep mode's status and failed_check.
 * Refusals: 400 for a missing or bad parameter, 404 for another path, 405 for another
 * method, 422 for /shares of a BUY trade, 503 for want of memory; each with a one-line
 * reason as its body. The server's own (http.h) come first: 400, 408, 413, 431, 503.
 *
 * Cap. With a cap on checks in flight (0: none), a check that arrives while that many
 * wait out their latency queues, in arrival order, and its latency starts when an
 * answer makes room: a service with that many workers. Its measured latency counts
 * the queueing too.
 *
 * A clearinghouse runs on a uv_loop it is given, on that loop's thread only (so a rank
 * can run one on a carrier; SIGPIPE is then the program's to ignore, as http.h says),
 * or on a thread of its own (ld_clearinghouse_start), which blocks SIGPIPE.
 * Functions return 0 or a negative errno.
 */
#ifndef LD_CLEARINGHOUSE_H
#define LD_CLEARINGHOUSE_H

#include <stdint.h>
#include <stdio.h>

#include <uv.h>

#include "http.h"

typedef struct ld_clearinghouse ld_clearinghouse;

/* What a clearinghouse has done since it opened, or since its stats were restarted. */
typedef struct ld_clearinghouse_stats {
    uint64_t served;    /* checks answered 200 */
    uint64_t failed;    /* of those, answered "fail" */
    uint64_t refused;   /* answered 400, 404, 405, 422, or 503 for want of memory */
    uint64_t abandoned; /* checks whose client had gone by their answer */
    uint64_t in_flight; /* checks waiting out their latency now; queued ones not */
    uint64_t peak_in_flight;
    /* The time-weighted mean of in_flight, from the first check's arrival to the last
     * answer (or to now, while checks are waiting). */
    double mean_in_flight;
    /* Measured latencies of the checks answered, arrival to answer, from a histogram
     * within 1/64 (1.6%) of the true value; 0 before the first. */
    int64_t latency_p50_ns, latency_p90_ns, latency_p99_ns, latency_max_ns;
    /* Connections, and the requests the bounds refused; open and peak_open count from
     * the open even after a restart. */
    ld_http_server_stats http;
} ld_clearinghouse_stats;

/* Serve on addr (port 0 takes a free one) on loop, within limits (NULL or zeros: the
 * defaults in http.h). -ENOMEM, a negative errno from the deadlines' timer, or libuv's
 * from binding. On failure too, run the loop once before closing it. */
int ld_clearinghouse_open(ld_clearinghouse **out, uv_loop_t *loop,
                          const struct sockaddr *addr, const ld_http_limits *limits);

/* The port it listens on. */
int ld_clearinghouse_port(const ld_clearinghouse *ch);

void ld_clearinghouse_stats_get(const ld_clearinghouse *ch, ld_clearinghouse_stats *out);

/* Count afresh from now, as for a new window of traffic; the checks in flight now
 * begin it. */
void ld_clearinghouse_stats_restart(ld_clearinghouse *ch);

/* At most max_in_flight checks wait out their latency at once, the rest queue (see
 * Cap above); 0: no cap. */
void ld_clearinghouse_set_max_in_flight(ld_clearinghouse *ch, uint64_t max_in_flight);

/* Stop serving: close every connection and drop the checks still waiting, unanswered.
 * Read its stats before; the loop must run the close callbacks (uv_run with
 * UV_RUN_NOWAIT is enough) before it is closed. */
void ld_clearinghouse_close(ld_clearinghouse *ch);

/* The stats as a few lines, each starting "clearinghouse:". */
void ld_clearinghouse_print(const ld_clearinghouse_stats *st, FILE *out);

/* --- On a thread of its own ----------------------------------------------------------
 */

typedef struct ld_clearinghouse_thread ld_clearinghouse_thread;

/* Start a thread with a loop of its own, serving on addr under max_in_flight (0: no
 * cap): one more OS thread. Returns once it listens, or with the error
 * ld_clearinghouse_open gave, -ENOMEM, or pthread_create's errno negated. */
int ld_clearinghouse_start(ld_clearinghouse_thread **out, const struct sockaddr *addr,
                           const ld_http_limits *limits, uint64_t max_in_flight);

int ld_clearinghouse_thread_port(const ld_clearinghouse_thread *t);

/* From any other thread, one at a time: the stats since the last call (or since the
 * start), and a new window begins, as ld_clearinghouse_stats_restart does. For the
 * traffic of one run, call it once before and once after. */
void ld_clearinghouse_thread_window(ld_clearinghouse_thread *t,
                                    ld_clearinghouse_stats *out);

/* Close the clearinghouse, join its thread and free it; *out (if not NULL) gets the
 * stats as they were at the close. */
void ld_clearinghouse_stop(ld_clearinghouse_thread *t, ld_clearinghouse_stats *out);

#endif
