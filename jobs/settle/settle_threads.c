/* settle_threads.c: the platform-thread baseline, a fixed pool of OS threads.
 *
 * --os-threads threads take trades from a shared counter, as an ExecutorService does,
 * and each call blocks its thread. Concurrency is capped at the pool size, so the
 * makespan is about trades / os_threads times a trade's latency. The threads are a
 * census crew: one that finds no trade left waits, as an ExecutorService's threads wait
 * for its shutdown, until the last is made, so the pool has its size at once.
 *
 * Under --io http each pool thread makes its checks on a blocking socket of its own,
 * kept alive from one check to the next: one connection per thread. Under --db
 * postgres fetch and update take a connection from the rank's pool of --db-conns for
 * the call and give it back, waiting while none is free, as a JDBC application's
 * threads do with HikariCP: that wait is part of the design's cost, and a figure.
 */
#include "census.h"
#include "settle.h"
#include "settle_db.h"
#include "settle_http.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct pool_run {
    const ld_job_input *in;
    ld_settle_db_pool *db; /* --db postgres: the connections the threads share */
    atomic_size_t next;
    atomic_int rc;       /* the first error of any thread */
    ld_census_crew crew; /* holds every thread until the last is made */
} pool_run;

/* One call of trade i, blocking the thread: its outcome (1: failed), or an error. */
static int pool_call(const ld_job_input *in, ld_http_conn *conn, size_t i, int c)
{
    const ld_settle_plan *plan = ld_settle_plan_of(in, i);
    if (conn && ld_settle_is_check(c))
        return ld_settle_http_blocking(conn, ld_settle_http_of(in), &in->trades[i], c);
    ld_settle_block_ns(ld_settle_latency(in, plan, c));
    return c == plan->failed_check;
}

/* Fetch or update of trade i as SQL, on a connection of the pool for the call. */
static int db_call(const ld_job_input *in, ld_settle_db_pool *pool, size_t i, int c,
                   int failed)
{
    PGconn *conn = ld_settle_db_pool_take(pool);
    int rc = ld_settle_db_blocking(conn, ld_settle_db_of(in), &in->trades[i], c, failed);
    ld_settle_db_pool_give(pool, conn);
    return rc;
}

/* Trade i's calls one by one, then its result: 0, or the error that cut it short.
 * Under --db postgres fetch and update are SQL on a connection of the pool db. */
static int pool_trade(const ld_job_input *in, ld_http_conn *conn, ld_settle_db_pool *db,
                      size_t i)
{
    int failed = -1;
    for (int c = 0; c < LD_SETTLE_CALLS; c++) {
        if (ld_settle_plan_of(in, i)->ms[c] == 0)
            continue;
        int outcome = db && ld_settle_is_db(c) ? db_call(in, db, i, c, failed)
                                               : pool_call(in, conn, i, c);
        if (outcome < 0)
            return outcome;
        ld_settle_note(&failed, c, outcome);
    }
    ld_settle_finish(in, i, failed);
    return 0;
}

/* A pool thread: take the next trade, settle it, repeat; under --io http on a
 * connection of its own. The first error stops the thread. */
static void *pool_thread(void *arg)
{
    pool_run *r = arg;
    const ld_settle_http *h = ld_settle_http_of(r->in);
    ld_http_conn *conn = NULL;
    int rc = h ? ld_http_conn_open(&conn, (const struct sockaddr *)&h->addr, h->host,
                                   h->timeout_ns)
               : 0;
    while (rc == 0) {
        size_t i = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed);
        if (i >= r->in->n)
            break;
        rc = pool_trade(r->in, conn, r->db, i);
    }
    if (rc != 0) {
        int none = 0;
        atomic_compare_exchange_strong(&r->rc, &none, rc);
    }
    ld_http_conn_close(conn);
    return NULL;
}

int ld_settle_threads(const ld_job_input *in)
{
    const ld_settle_config *sc = in->cfg->opts;
    unsigned size = (unsigned)sc->os_threads;
    pthread_t *threads = malloc(size * sizeof *threads);
    if (!threads)
        return -ENOMEM;
    pool_run r = {.in = in};
    atomic_init(&r.next, 0);
    atomic_init(&r.rc, 0);
    int rc = ld_settle_db_of(in)
                 ? ld_settle_db_pool_open(&r.db, ld_settle_db_of(in), size)
                 : 0;
    if (rc != 0) {
        free(threads);
        return ld_settle_end(in, rc);
    }
    ld_census_crew_init(&r.crew);
    unsigned started = 0;
    /* Small stacks: the pool's cost should be its threads, not 8 MiB reservations. */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (; started < size; started++) {
        int err = ld_census_spawn(&r.crew, &threads[started], &attr, pool_thread, &r);
        if (err) {
            rc = -err;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    /* A failed create still lets the started threads drain the queue, so no trade is
     * left unsettled; the error is reported all the same. */
    ld_census_crew_complete(&r.crew);
    for (unsigned t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    ld_census_crew_destroy(&r.crew);
    ld_settle_db_pool_close(r.db);
    free(threads);
    return ld_settle_end(in, rc ? rc : atomic_load(&r.rc));
}
