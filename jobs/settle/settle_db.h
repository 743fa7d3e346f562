/* settle_db.h: settle's fetch and update as SQL on PostgreSQL (--db postgres).
 *
 * Connections. threads: a bounded pool of --db-conns blocking connections per rank
 * (default 10, HikariCP's default pool size; at most --os-threads), shared by the pool's
 * threads as a JDBC application shares HikariCP's: a thread takes one for each call and
 * gives it back, waiting while none is free. Green strategies and callbacks: --db-pipes
 * connections per carrier (default 1) in libpq's pipeline mode, shared by every trade of
 * the carrier, with as many queries in flight on each as there are trades waiting. A
 * connection's backend runs its queries one after another, each its own transaction: with
 * durable commits each update waits for the WAL flush of the one before it on that
 * connection, so more pipes let the server commit them in groups.
 *
 * Where (--db-url), as --clearinghouse places its server:
 *   local   one private server per rank (settle_db_server.h), started in prepare,
 *           reached by its socket only (no TCP), and stopped in release;
 *   rank0   one private server for the whole job on rank 0's node, started in share
 *           and stopped in unshare, listening on the address of rank 0's host name,
 *           which every rank connects to, letting in the job's nodes only (cfg->peers)
 *           with a password made for the run, handed to the ranks in the share's text
 *           (over MPI), never in a URL or on a command line;
 *   env     libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE), or
 *   URL     a server of the user's, as a postgresql:// URL; scripts/pg-local starts
 *           one. Every rank checks it can connect while options are checked.
 * So a bad URL, a server that refuses, or (local, rank0) missing server binaries is
 * one message and exit status 2, before any work. A URL in a message has its user
 * information and password masked (ld_pg_url_mask).
 *
 * Room. What a rank opens is what the strategies that run need, no more: the largest of
 * threads' pool and the carriers' pipes (a strategy that does not run opens nothing),
 * and one more beside it while the stock is held (the load, the check after a run). On
 * a server the ranks share, rank 0 reads max_connections and what pg_stat_activity
 * counts in use before any rank opens one, and refuses the run with one line naming
 * the options to lower when every rank's would not fit; rank 0's own server is sized
 * for them.
 *
 * The book. Rank 0 makes a fresh schema for the run (share), loomdist_<pid>_<time>,
 * with one table, trades; every rank then loads its own trades into it with COPY
 * before the clock (prepare). The schema is dropped when the job is over (unshare).
 *
 * The calls. fetch is `SELECT quantity FROM trades WHERE id = $1` (one row, or the
 * run fails with -ENOENT), update is `UPDATE trades SET status = $2, run = $3 WHERE
 * id = $1` (one row), each a prepared statement. An update sets a value, never adds
 * to one, so repeating it changes nothing: runs, iterations and a repeat after a
 * failure all leave the same status. `run` counts this rank's strategy runs, so that
 * the check after each run can tell a status written by it from an earlier run's.
 *
 * Figures. Each strategy run reports the p50, p99 and maximum of its fetch and update
 * round trips (send to answer; on a shared pipelined connection the queries queued
 * ahead included) as db_fetch_p50, ..., db_update_max in ms, db_connections, the
 * connections it used (the server's backends), db_opened, those of them it had
 * to open inside the clock because the stock had none ready (0 in a sound run), and
 * db_backends, the server's client backends when the rank checked the run (every
 * rank's stock on a server they share). threads adds its pool's waits for a free
 * connection: db_wait_p50, db_wait_p99 and db_wait_max in ms, over every take, and
 * db_waited, the takes that found none free.
 *
 * Connections before the clock. prepare opens a stock of connections, each with the
 * statements prepared, as many as the largest run takes (see Room); a run takes its
 * connections from it and gives them back at its end,
 * so no strategy opens one inside its timed run, as a JDBC pool made at start-up.
 *
 * The proof. After every strategy run the rank reads its trades' status and run back
 * and compares them, trade for trade, with the results the run hands the HDF5 file;
 * any difference fails the run with one message naming the trade.
 *
 * A database that goes away mid-run fails the calls in flight with -ECONNRESET; the
 * first says which database and what libpq said, as the run's reason (why.h), which
 * the driver prints once for the whole job.
 */
#ifndef LD_SETTLE_DB_H
#define LD_SETTLE_DB_H

#include <stddef.h>

#include "pg_uv.h"
#include "settle.h"

typedef struct ld_settle_db ld_settle_db;

/* The calls that go to the database under --db postgres. */
static inline int ld_settle_is_db(int call)
{
    return call == LD_CALL_FETCH || call == LD_CALL_UPDATE;
}

/* settle's check, for the db options: their form, and under --db postgres that this
 * rank can connect. */
int ld_settle_db_check(const ld_settle_config *sc, char *err, size_t errlen);

/* On rank 0 (host: its host name): the run's schema and its empty table (under
 * --db-url rank0 on a server started now); into blob the schema's name, then under
 * rank0 a space and the server's URL. */
int ld_settle_db_share(const ld_job_config *cfg, const char *host, char *blob, size_t len,
                       void **state);

/* Drop the run's schema, or stop rank 0's server. */
void ld_settle_db_unshare(void *state);

/* In prepare: this rank's trades COPYed into the schema share names in `shared`
 * (under --db-url local into its own server, started now, with the schema made). */
int ld_settle_db_open(ld_settle_db **out, const ld_job_config *cfg, const char *shared,
                      const ld_trade *trades, size_t n);

/* Free db, stopping a server of its own. NULL does nothing. */
void ld_settle_db_close(ld_settle_db *db);

/* A blocking connection with the statements prepared, from the stock made before the
 * clock (made now, and counted as db_opened, when the stock has none).
 * ld_settle_db_disconnect gives it back (a broken one is closed). */
int ld_settle_db_connect(PGconn **out, ld_settle_db *db);
void ld_settle_db_disconnect(ld_settle_db *db, PGconn *c);

/* The threads strategy's pool: --db-conns connections (no more than threads) taken
 * from the stock, shared by the run's threads. A take waits until one is free, and
 * counts its wait; give hands it back, broken or not. Closing gives them back to the
 * stock and keeps the waits for the run's figures. NULL does nothing. */
typedef struct ld_settle_db_pool ld_settle_db_pool;
int ld_settle_db_pool_open(ld_settle_db_pool **out, ld_settle_db *db, size_t threads);
PGconn *ld_settle_db_pool_take(ld_settle_db_pool *p);
void ld_settle_db_pool_give(ld_settle_db_pool *p, PGconn *c);
void ld_settle_db_pool_close(ld_settle_db_pool *p);

/* A carrier's --db-pipes pipelined connections on its loop, taken from the stock,
 * shared by its trades, each call going to the next in turn. */
typedef struct ld_settle_db_pipes ld_settle_db_pipes;
int ld_settle_db_pipes_open(ld_settle_db_pipes **out, ld_settle_db *db, uv_loop_t *loop);

/* Close them (as ld_pg_uv_close does each), their connections given back to the
 * stock. NULL does nothing. */
void ld_settle_db_pipes_close(ld_settle_db_pipes *p);

/* Call `call` (fetch or update) of trade t, whose first failed check is `failed`
 * (-1: none), so that an update writes its final status: 0 or a negative errno.
 * Blocking on c; parking the calling green thread on one of p; or with cb(arg, rc)
 * called on p's loop when it is done. */
int ld_settle_db_blocking(PGconn *c, ld_settle_db *db, const ld_trade *t, int call,
                          int failed);
int ld_settle_db_green(ld_settle_db_pipes *p, ld_settle_db *db, const ld_trade *t,
                       int call, int failed);
typedef void (*ld_settle_db_cb)(void *arg, int rc);
int ld_settle_db_uv(ld_settle_db_pipes *p, ld_settle_db *db, const ld_trade *t, int call,
                    int failed, ld_settle_db_cb cb, void *arg);

/* After a strategy's run: when it succeeded, every trade's status in the database
 * compared with its result; the run counted either way. Returns rc, or the error of
 * the comparison. */
int ld_settle_db_end(ld_settle_db *db, const ld_job_input *in, int rc);

#endif
