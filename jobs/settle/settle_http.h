/* settle_http.h: settle's checks as HTTP calls to the clearinghouse
 * (clearinghouse.h): where it runs, each check's request, and what its answer says.
 *
 * Where (--clearinghouse):
 *   local      one per rank, on a thread of its own, started when the job prepares and
 *              stopped when it releases; its stats for each strategy's run become the
 *              run's named figures.
 *   rank0      one on rank 0 for the whole job (share and unshare), serving every
 *              rank; the others reach it by rank 0's host name, or 127.0.0.1 when they
 *              share its node. Its stats are not split by rank, so none are recorded.
 *   HOST:PORT  a server of its own (loomdist-clearinghouse); rank 0 resolves it and
 *              tries a connection before any rank prepares.
 * A clearinghouse loomdist starts takes as many connections as the process may open
 * files less 256 kept for the run itself (half under a limit of 512 or less), at least
 * twice as many requests held, and --ch-max-inflight checks in flight at once (0: no
 * cap). Wherever it runs, each check ends within --ch-timeout seconds, or fails the
 * run (-ETIMEDOUT).
 *
 * Every call here returns 0 or a negative errno, never exits.
 */
#ifndef LD_SETTLE_HTTP_H
#define LD_SETTLE_HTTP_H

#include <stddef.h>
#include <sys/socket.h>

#include "clearinghouse.h"
#include "http_client.h"
#include "settle.h"

/* The longest target of a check, with its NUL. */
#define LD_SETTLE_TARGET_MAX 192

struct ld_settle_http {
    struct sockaddr_storage addr; /* the clearinghouse's */
    char host[LD_HTTP_HOST_MAX];  /* its Host header, HOST:PORT */
    char tail[128];               /* "&seed=S&scale=X&fail=P", the same for every trade */
    ld_clearinghouse_thread *local; /* --clearinghouse local: this rank's own */
    uint64_t timeout_ns;            /* --ch-timeout: each check's */
};

/* settle's check hook: --clearinghouse's form, and the http options only under
 * --io http (so a sleep run's experiment key never names a clearinghouse). */
int ld_settle_http_check(const void *opts, char *err, size_t errlen);

/* settle's share hook, on rank 0: the clearinghouse every rank's checks go to, as
 * "HOST:PORT" ("" when each rank starts its own, or under --io sleep). */
int ld_settle_http_share(const ld_job_config *cfg, const char *host, char *blob,
                         size_t len, void **state);

/* settle's unshare hook: stop rank 0's clearinghouse. */
void ld_settle_http_unshare(void *state);

/* In prepare, under --io http: where this rank's checks go, from cfg->shared, or a
 * clearinghouse of its own started now. */
int ld_settle_http_open(ld_settle_http **out, const ld_job_config *cfg);

/* Stop this rank's clearinghouse, if it has one, and free h. NULL does nothing. */
void ld_settle_http_close(ld_settle_http *h);

/* The target of check `call` of trade t: "/counterparty?trade=ID&seed=...". */
void ld_settle_http_target(const ld_settle_http *h, const ld_trade *t, int call,
                           char *out, size_t size);

/* What a check's reply says: 1 fail, 0 pass; rc when the request failed, -EPROTO
 * for any other reply. */
int ld_settle_http_outcome(int rc, const ld_http_reply *reply);

/* Check `call` of trade t on a blocking connection, or from a green thread on its
 * scheduler's set of connections: its outcome, as ld_settle_http_outcome says. */
int ld_settle_http_blocking(ld_http_conn *c, const ld_settle_http *h, const ld_trade *t,
                            int call);
int ld_settle_http_green(ld_http_conns *set, const ld_settle_http *h, const ld_trade *t,
                         int call);

/* After a strategy's run, with a clearinghouse of the rank's own: its stats since the
 * last run as named figures (checks served, connections, peak and mean in flight, p99
 * latency, errors). Nothing otherwise. */
void ld_settle_http_figures(const ld_settle_http *h, ld_figures *figures);

#endif
