/* pool_server.h: the pooling study's server under test, an HTTP/1.1 server whose
 * requests run on green threads, one event loop per carrier as Netty runs them.
 *
 * Every carrier listens on the one port (SO_REUSEPORT), so the kernel spreads the
 * connections among them. A request is handed to a green thread of its carrier, which
 * makes a blocking GET of the backend's /think, parking on it, then answers with the
 * backend's body:
 *
 *   fresh        a new green thread per request, JEP 444's advice; at most as many
 *                live on a carrier as it may have connections open (connections +
 *                64), one per client, and a request past them (a client that
 *                pipelines) is answered 503 and counted as an error
 *   pooled       `connections` long-lived green threads, a carrier's share each,
 *                taking requests from their carrier's queue in arrival order; idle
 *                threads wait their turn in order too, so every one of them serves
 *   pooled-trim  pooled, on schedulers that trim a parked thread's capacity after
 *                `trim_after` small freezes (gt.h's trim policy)
 *
 * The warm-up stands in for the JVM's C1 phase: until the first phase change, a
 * request's thread reaches the backend call through `warmup_depth` real frames, each
 * with locals it reads back after the call, and later requests take the shallow path.
 *
 * Backend connections are shared: at most `backend_conns` calls are in flight at
 * once, a carrier's share each, and a thread past them waits its turn. A server of
 * `connections` clients then needs connections + backend_conns descriptors, not
 * twice the connections.
 *
 * Functions return 0 or a negative errno.
 */
#ifndef LD_POOL_SERVER_H
#define LD_POOL_SERVER_H

#include <netinet/in.h>
#include <stdint.h>

#include "job.h"
#include "pool_stats.h"

enum ld_pool_mode { LD_POOL_FRESH, LD_POOL_POOLED, LD_POOL_POOLED_TRIM };

typedef struct ld_pool_server_config {
    enum ld_pool_mode mode;
    struct sockaddr_in listen;  /* port 0 takes a free one */
    struct sockaddr_in backend; /* serving GET /think?ms= */
    double think_ms;
    uint64_t connections;   /* clients expected: pooled threads, the servers' bound */
    uint64_t backend_conns; /* calls to the backend in flight at once, all carriers */
    unsigned warmup_depth;  /* frames of the warm-up's call path */
    unsigned trim_after;    /* pooled-trim: the trim policy's K */
    ld_job_config carriers; /* carriers, CPUs, stack size and mode */
} ld_pool_server_config;

typedef struct ld_pool_server ld_pool_server;

/* Start the carriers and their servers; returns once every one listens. A start that
 * fails leaves the carriers that did start running, and the process should exit: the
 * server is a program of its own (pool/), run for one measurement. */
int ld_pool_server_start(ld_pool_server **out, const ld_pool_server_config *cfg);

int ld_pool_server_port(const ld_pool_server *s);

/* The counts of the phase now ending, then a new phase: requests from now on take the
 * shallow path, and every count starts afresh. */
int ld_pool_server_phase(ld_pool_server *s, ld_pool_stats *ended);

/* The counts of the phase under way, which goes on. */
int ld_pool_server_stats(ld_pool_server *s, ld_pool_stats *out);

/* Close the servers, let the requests in hand finish, join the carriers and free s.
 * Returns the first error a carrier met. */
int ld_pool_server_stop(ld_pool_server *s);

#endif
