/* settle_db.c: the trade book in PostgreSQL, and settle's fetch and update as SQL on
 * it (settle_db.h). */
#include "settle_db.h"

#include <errno.h>
#include <libpq-fe.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "cpus.h"
#include "gt.h"
#include "hist.h"
#include "metrics.h"
#include "pg_private.h"
#include "why.h"

/* Sessions beyond the ranks' stocks that a private server takes: the schema's making,
 * its dropping, a psql of the user's. */
#define SPARE_SESSIONS 8

/* Sessions a rank opens beside its stock while it holds it: the load before the first
 * run, the check after each (one at a time). */
#define RANK_EXTRA_SESSIONS 1

/* Hex digits of the password of rank 0's private server. */
#define PASSWORD_LEN 48

/* The longest schema name: loomdist_<pid>_<seconds>_<microseconds>. */
#define SCHEMA_MAX 64

/* Rows COPY sends in one piece. */
#define COPY_CHUNK (64u * 1024u)

enum { STMT_FETCH, STMT_UPDATE, STMTS };

static const char *const stmt_name[STMTS] = {"ld_fetch", "ld_update"};

struct ld_settle_db {
    char url[LD_OPT_TEXT_MAX];
    char password[PASSWORD_LEN + 1]; /* rank 0's private server's; "" for the others */
    char where[192]; /* host:port/dbname, for messages: never the URL's password */
    char schema[SCHEMA_MAX];
    ld_pg_private *server; /* --db-url local: this rank's own */
    char sql[STMTS][256];
    ld_pg_stmt stmts[STMTS];
    unsigned run; /* this rank's strategy runs so far */
    size_t pipes; /* --db-pipes */
    size_t pool;  /* --db-conns */
    /* The run's round trips, fetch and update, each from its send to its answer (on a
     * pipe, the queries ahead of it included), the connections it took, and those it
     * had to open itself, inside the clock, when the stock had none. */
    pthread_mutex_t lock;
    ld_hist trip[STMTS];
    atomic_uint connections, opened;
    /* Connections made before the clock, their statements prepared, that the runs
     * take and give back: as many as the largest run takes. Under lock. */
    PGconn **stock;
    size_t stocked, stock_cap;
    /* The threads strategy's pool in the run, if it had one: its size (--db-conns, at
     * most the pool's threads), the waits for a free connection, and how many of the
     * takes found none free. Set when its pool closes. */
    size_t pooled;
    ld_hist wait;
    unsigned waited;
};

/* The password to connect with: rank 0's private server's, or libpq's own ways. */
static const char *password_of(const ld_settle_db *db)
{
    return db->password[0] ? db->password : NULL;
}

/* One round trip of statement s, begun at t0 (ld_now_ns). */
static void count_trip(ld_settle_db *db, int s, int64_t t0)
{
    int64_t ns = ld_now_ns() - t0;
    pthread_mutex_lock(&db->lock);
    ld_hist_add(&db->trip[s], ns > 0 ? (uint64_t)ns : 0);
    pthread_mutex_unlock(&db->lock);
}

/* The run's reason when it loses the database (why.h): the first said, whichever
 * thread or carrier saw it, is the one the driver prints for the whole run. */
static void say_lost(const ld_settle_db *db, const char *why)
{
    ld_why_say("lost the database at %s: %s", db->where,
               why && why[0] ? why : "the server closed the connection");
}

/* --- Options ---------------------------------------------------------------------- */

/* --db-url local or rank0: a server loomdist starts itself. */
static int is_private(const char *url)
{
    return strcmp(url, "local") == 0 || strcmp(url, "rank0") == 0;
}

/* That the server binaries a private server needs are there. */
static int check_private(const char *url, char *err, size_t errlen)
{
    char why[256] = "", bin[512];
    if (ld_pg_private_bindir(bin, sizeof bin, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "--db-url %s: %s", url, why);
    return -EINVAL;
}

int ld_settle_db_check(const ld_settle_config *sc, char *err, size_t errlen)
{
    char why[256] = "", shown[LD_OPT_TEXT_MAX + 16];
    PGconn *c;
    if (sc->db == LD_SETTLE_DB_NONE &&
        (strcmp(sc->db_url, "env") != 0 || sc->db_pipes != 1 ||
         sc->db_conns != LD_SETTLE_DB_CONNS)) {
        snprintf(err, errlen,
                 "--db-url, --db-pipes and --db-conns are for --db postgres: under --db "
                 "none fetch and update are waits");
        return -EINVAL;
    }
    if (is_private(sc->db_url)) /* under --db none it is env, checked above */
        return check_private(sc->db_url, err, errlen);
    ld_pg_url_mask(sc->db_url, shown, sizeof shown);
    if (ld_pg_url_check(sc->db_url, why, sizeof why) != 0) {
        snprintf(err, errlen,
                 "--db-url takes env, local, rank0 or a postgresql:// URL, not '%s': %s",
                 shown, why);
        return -EINVAL;
    }
    if (sc->db == LD_SETTLE_DB_NONE)
        return 0;
    if (ld_pg_connect(&c, sc->db_url, NULL, NULL, 0, why, sizeof why) != 0) {
        snprintf(err, errlen, "cannot connect to the database at --db-url %s: %s", shown,
                 why);
        return -EINVAL;
    }
    PQfinish(c);
    return 0;
}

/* The threads strategy's pool: --db-conns, no more than its threads; 0 when it does
 * not run. */
static size_t pool_size(const ld_job_config *cfg, const ld_settle_config *sc)
{
    if (!ld_settle_runs_threads(cfg))
        return 0;
    return (size_t)(sc->db_conns < sc->os_threads ? sc->db_conns : sc->os_threads);
}

/* The pipelined connections of the strategies on carriers: --db-pipes per carrier; 0
 * when none of them runs. */
static size_t pipes_size(const ld_job_config *cfg, const ld_settle_config *sc)
{
    if (!ld_settle_runs_carriers(cfg))
        return 0;
    size_t carriers = cfg->carriers ? cfg->carriers : cfg->cpus->n;
    return carriers * (size_t)sc->db_pipes;
}

/* As many connections as the selected strategies' largest run takes (they run one
 * after another), and no more. */
static size_t stock_size(const ld_job_config *cfg, const ld_settle_config *sc)
{
    size_t pool = pool_size(cfg, sc), pipes = pipes_size(cfg, sc);
    return pool > pipes ? pool : pipes;
}

/* The sessions the job holds at once on a server every rank shares: each rank's stock
 * and the one it opens beside it. Rank 0 counts for every rank: it owns the largest
 * share of its node's CPUs, so its carriers are the most of a node like its own. */
static size_t job_sessions(const ld_job_config *cfg, const ld_settle_config *sc)
{
    size_t ranks = cfg->ranks > 0 ? (size_t)cfg->ranks : 1;
    return ranks * (stock_size(cfg, sc) + RANK_EXTRA_SESSIONS);
}

/* The options that lower the sessions a rank holds: whichever sizes its stock. */
static const char *to_lower(const ld_job_config *cfg, const ld_settle_config *sc)
{
    size_t pool = pool_size(cfg, sc), pipes = pipes_size(cfg, sc);
    if (pool == pipes)
        return "--db-conns, --carriers or --db-pipes";
    return pool > pipes ? "--db-conns" : "--carriers or --db-pipes";
}

/* --- The run's schema --------------------------------------------------------------- */

/* Where c is, for messages. */
static void where_of(PGconn *c, char *out, size_t len)
{
    snprintf(out, len, "%s:%s/%s", PQhost(c), PQport(c), PQdb(c));
}

typedef struct db_share {
    char url[LD_OPT_TEXT_MAX];       /* "" under --db-url local: each rank has its own */
    char password[PASSWORD_LEN + 1]; /* --db-url rank0: its server's, made now */
    char schema[SCHEMA_MAX];
    ld_pg_private *server; /* --db-url rank0 */
} db_share;

/* A name no other run has: this process's, at this microsecond. */
static void schema_name(char *out, size_t len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(out, len, "loomdist_%ld_%lld_%06ld", (long)getpid(), (long long)ts.tv_sec,
             ts.tv_nsec / 1000);
}

/* The run's schema and its empty table on c. */
static int make_schema(PGconn *c, const char *schema, char *why, size_t len)
{
    char sql[512], what[256] = "";
    snprintf(sql, sizeof sql,
             "CREATE SCHEMA %s; CREATE TABLE %s.trades (id bigint PRIMARY KEY, "
             "symbol text NOT NULL, side smallint NOT NULL, quantity integer NOT "
             "NULL, price_cents bigint NOT NULL, counterparty integer NOT NULL, "
             "status smallint, run integer NOT NULL DEFAULT -1)",
             schema, schema);
    int rc = ld_pg_exec(c, sql, what, sizeof what);
    if (rc != 0)
        snprintf(why, len, "cannot make the trade book's schema on the database: %s",
                 what);
    return rc;
}

/* Connect to url and make the schema there. */
static int connect_and_make(const char *url, const char *password, const char *schema,
                            char *why, size_t len)
{
    PGconn *c;
    char what[256] = "";
    int rc = ld_pg_connect(&c, url, password, NULL, 0, what, sizeof what);
    if (rc != 0) {
        snprintf(why, len, "cannot connect to the database: %s", what);
        return rc;
    }
    rc = make_schema(c, schema, why, len);
    PQfinish(c);
    return rc;
}

/* Whether a server the ranks share has room for the job's sessions beside what it
 * serves now (c's own not counted, as it closes before any rank opens one): its
 * max_connections, less its client backends, less the slots it keeps for superusers
 * when c's role is not one. Else -EUSERS, with one line naming what to lower. */
static int check_room(PGconn *c, const ld_job_config *cfg, char *why, size_t len)
{
    const ld_settle_config *sc = cfg->opts;
    PGresult *r = PQexec(
        c, "SELECT current_setting('max_connections')::int, (SELECT count(*) FROM "
           "pg_stat_activity WHERE backend_type = 'client backend') - 1, CASE WHEN "
           "rolsuper THEN 0 ELSE current_setting('superuser_reserved_connections')::int "
           "+ coalesce(current_setting('reserved_connections', true)::int, 0) END FROM "
           "pg_roles WHERE rolname = current_user");
    int rc =
        PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? 0 : ld_pg_error(c);
    char where[192];
    where_of(c, where, sizeof where);
    if (rc != 0)
        snprintf(why, len, "cannot read the sessions the database at %s takes: %s", where,
                 PQerrorMessage(c));
    long max = rc == 0 ? strtol(PQgetvalue(r, 0, 0), NULL, 10) : 0;
    long used = rc == 0 ? strtol(PQgetvalue(r, 0, 1), NULL, 10) : 0;
    long kept = rc == 0 ? strtol(PQgetvalue(r, 0, 2), NULL, 10) : 0;
    PQclear(r);
    long room = max - used - kept;
    size_t need = job_sessions(cfg, sc);
    if (rc == 0 && (room < 0 || need > (size_t)room)) {
        snprintf(why, len,
                 "the database at %s takes %ld more sessions (max_connections %ld, %ld "
                 "in use, %ld kept for superusers) and this run needs %zu, %d rank(s) "
                 "x (%zu connections + %d): lower %s, or run fewer ranks",
                 where, room > 0 ? room : 0, max, used, kept, need,
                 cfg->ranks > 0 ? cfg->ranks : 1, stock_size(cfg, sc),
                 RANK_EXTRA_SESSIONS, to_lower(cfg, sc));
        rc = -EUSERS;
    }
    return rc;
}

/* A server of the user's: the job's sessions checked against it, then the schema made,
 * before any rank opens a connection. */
static int use_server(db_share *s, const ld_job_config *cfg, char *why, size_t len)
{
    PGconn *c;
    char what[256] = "";
    int rc = ld_pg_connect(&c, s->url, NULL, NULL, 0, what, sizeof what);
    if (rc != 0) {
        snprintf(why, len, "cannot connect to the database: %s", what);
        return rc;
    }
    rc = check_room(c, cfg, why, len);
    if (rc == 0)
        rc = make_schema(c, s->schema, why, len);
    PQfinish(c);
    return rc;
}

/* Under --db-url rank0 the server every rank reaches at the address rank 0's host
 * has for the other nodes (ld_pg_private_address), listening on it, letting in
 * the job's nodes only, with a password made now, sized for every rank's sessions;
 * its URL into s->url, then the schema. */
static int start_rank0(db_share *s, const ld_job_config *cfg, const char *host, char *why,
                       size_t len)
{
    char addr[256];
    ld_pg_private_address(host, addr, sizeof addr);
    int rc = ld_pg_private_password(s->password, sizeof s->password);
    ld_pg_private_opts o = {
        .listen_addr = addr,
        .connect_host = addr,
        .peers = cfg->peers ? cfg->peers : "127.0.0.1",
        .password = s->password,
        .max_connections = (unsigned)(job_sessions(cfg, cfg->opts) + SPARE_SESSIONS),
    };
    if (rc == 0)
        rc = ld_pg_private_start(&s->server, &o, s->url, sizeof s->url, why, len);
    if (rc == 0)
        rc = connect_and_make(s->url, s->password, s->schema, why, len);
    return rc;
}

int ld_settle_db_share(const ld_job_config *cfg, const char *host, char *blob, size_t len,
                       void **state)
{
    const ld_settle_config *sc = cfg->opts;
    char why[512] = "";
    db_share *s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;
    schema_name(s->schema, sizeof s->schema);
    int rc = 0;
    if (strcmp(sc->db_url, "rank0") == 0) {
        rc = start_rank0(s, cfg, host, why, sizeof why);
    } else if (strcmp(sc->db_url, "local") != 0) {
        snprintf(s->url, sizeof s->url, "%s", sc->db_url);
        rc = use_server(s, cfg, why, sizeof why);
    }
    if (rc != 0) {
        snprintf(blob, len, "%s", why);
        ld_pg_private_stop(s->server);
        free(s);
        return rc;
    }
    /* The schema, and where a server of the job's own is and its password: over MPI
     * to the ranks, never in a URL or on a command line. */
    int n = s->server ? snprintf(blob, len, "%s %s %s", s->schema, s->url, s->password)
                      : snprintf(blob, len, "%s", s->schema);
    if (n < 0 || (size_t)n >= len) {
        snprintf(blob, len, "the database's address is too long to hand the ranks");
        ld_settle_db_unshare(s);
        return -ENAMETOOLONG;
    }
    *state = s;
    return 0;
}

void ld_settle_db_unshare(void *state)
{
    db_share *s = state;
    PGconn *c;
    if (s->server)
        ld_pg_private_stop(s->server); /* its folder goes with it */
    else if (s->url[0] && ld_pg_connect(&c, s->url, NULL, NULL, 0, NULL, 0) == 0) {
        char sql[128];
        snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", s->schema);
        ld_pg_exec(c, sql, NULL, 0);
        PQfinish(c);
    }
    explicit_bzero(s->password, sizeof s->password);
    free(s);
}

/* --- Loading ------------------------------------------------------------------------ */

/* The trades as COPY's text rows, a chunk at a time. */
static int copy_rows(PGconn *c, const ld_trade *trades, size_t n)
{
    char *buf = malloc(COPY_CHUNK);
    size_t used = 0;
    int rc = buf ? 0 : -ENOMEM;
    for (size_t i = 0; rc == 0 && i <= n; i++) {
        if (i == n || used > COPY_CHUNK - 128) {
            rc = used && PQputCopyData(c, buf, (int)used) != 1 ? ld_pg_error(c) : 0;
            used = 0;
        }
        if (i < n)
            used += (size_t)snprintf(
                buf + used, COPY_CHUNK - used,
                "%" PRIu64 "\t%s\t%u\t%" PRIu32 "\t%" PRId64 "\t%" PRIu32 "\n",
                trades[i].id, trades[i].symbol, trades[i].side, trades[i].quantity,
                trades[i].price_cents, trades[i].counterparty);
    }
    free(buf);
    return rc;
}

/* COPY FROM STDIN, then its end and its result. */
static int load(PGconn *c, const char *schema, const ld_trade *trades, size_t n)
{
    char sql[192];
    snprintf(sql, sizeof sql,
             "COPY %s.trades (id, symbol, side, quantity, price_cents, counterparty) "
             "FROM STDIN",
             schema);
    PGresult *r = PQexec(c, sql);
    int rc = PQresultStatus(r) == PGRES_COPY_IN ? 0 : ld_pg_error(c);
    PQclear(r);
    if (rc == 0)
        rc = copy_rows(c, trades, n);
    if (PQputCopyEnd(c, rc == 0 ? NULL : "loomdist: loading failed") != 1 && rc == 0)
        rc = ld_pg_error(c);
    while ((r = PQgetResult(c)) != NULL) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK && rc == 0)
            rc = ld_pg_error(c);
        PQclear(r);
    }
    return rc;
}

/* Where this rank's database is, from rank 0's share ("SCHEMA", or "SCHEMA URL
 * PASSWORD" for rank 0's server): under --db-url local a server of its own started
 * now, socket only, with the schema made. */
static int locate(ld_settle_db *db, const ld_job_config *cfg, const char *shared)
{
    const ld_settle_config *sc = cfg->opts;
    char why[512] = "";
    int at = 0;
    if (sscanf(shared, "%63s %n", db->schema, &at) != 1)
        return -EPROTO;
    if (sscanf(shared + at, "%127s %48s", db->url, db->password) != 2)
        snprintf(db->url, sizeof db->url, "%s", sc->db_url);
    if (strcmp(sc->db_url, "local") != 0)
        return 0;
    ld_pg_private_opts o = {
        .max_connections =
            (unsigned)(stock_size(cfg, sc) + RANK_EXTRA_SESSIONS + SPARE_SESSIONS),
    };
    int rc =
        ld_pg_private_start(&db->server, &o, db->url, sizeof db->url, why, sizeof why);
    if (rc == 0)
        rc = connect_and_make(db->url, NULL, db->schema, why, sizeof why);
    if (rc != 0)
        ld_why_say("--db-url local: %s", why);
    return rc;
}

/* The stock made, before the clock. */
static int fill_stock(ld_settle_db *db, size_t n)
{
    char why[256] = "";
    db->stock = calloc(n ? n : 1, sizeof *db->stock);
    if (!db->stock)
        return -ENOMEM;
    db->stock_cap = n;
    for (; db->stocked < n; db->stocked++) {
        int rc = ld_pg_connect(&db->stock[db->stocked], db->url, password_of(db),
                               db->stmts, STMTS, why, sizeof why);
        if (rc != 0) {
            ld_why_say("opening connection %zu of %zu to %s failed: %s", db->stocked + 1,
                       n, db->where, why);
            return rc;
        }
    }
    return 0;
}

int ld_settle_db_open(ld_settle_db **out, const ld_job_config *cfg, const char *shared,
                      const ld_trade *trades, size_t n)
{
    const ld_settle_config *sc = cfg->opts;
    char why[256] = "";
    PGconn *c;
    ld_settle_db *db = calloc(1, sizeof *db);
    if (!db)
        return -ENOMEM;
    pthread_mutex_init(&db->lock, NULL);
    db->pipes = (size_t)sc->db_pipes;
    db->pool = (size_t)sc->db_conns;
    const char *schema = db->schema;
    int rc = locate(db, cfg, shared);
    if (rc != 0) {
        ld_settle_db_close(db);
        return rc;
    }
    snprintf(db->sql[STMT_FETCH], sizeof db->sql[0],
             "SELECT quantity FROM %s.trades WHERE id = $1::bigint", schema);
    snprintf(db->sql[STMT_UPDATE], sizeof db->sql[0],
             "UPDATE %s.trades SET status = $2::smallint, run = $3::integer WHERE id = "
             "$1::bigint",
             schema);
    for (int s = 0; s < STMTS; s++)
        db->stmts[s] = (ld_pg_stmt){stmt_name[s], db->sql[s], s == STMT_FETCH ? 1 : 3};
    rc = ld_pg_connect(&c, db->url, password_of(db), NULL, 0, why, sizeof why);
    if (rc != 0)
        ld_why_say("cannot connect to the database: %s", why);
    if (rc == 0) {
        where_of(c, db->where, sizeof db->where);
        rc = load(c, schema, trades, n);
        if (rc != 0)
            ld_why_say("loading the trades into %s failed: %s", db->where,
                       PQerrorMessage(c));
        PQfinish(c);
    }
    if (rc == 0)
        rc = fill_stock(db, stock_size(cfg, sc));
    if (rc != 0) {
        ld_settle_db_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

void ld_settle_db_close(ld_settle_db *db)
{
    if (!db)
        return;
    for (size_t i = 0; i < db->stocked; i++)
        PQfinish(db->stock[i]);
    free(db->stock);
    ld_pg_private_stop(db->server);
    explicit_bzero(db->password, sizeof db->password);
    pthread_mutex_destroy(&db->lock);
    free(db);
}

/* A connection from the stock, or NULL when it has none. */
static PGconn *take(ld_settle_db *db)
{
    pthread_mutex_lock(&db->lock);
    PGconn *c = db->stocked ? db->stock[--db->stocked] : NULL;
    pthread_mutex_unlock(&db->lock);
    return c;
}

/* One made now, inside the clock, when the stock had none: counted as db_opened. */
static int open_now(PGconn **out, ld_settle_db *db)
{
    char why[256] = "";
    int rc =
        ld_pg_connect(out, db->url, password_of(db), db->stmts, STMTS, why, sizeof why);
    if (rc != 0)
        say_lost(db, why);
    else
        atomic_fetch_add(&db->opened, 1);
    return rc;
}

int ld_settle_db_connect(PGconn **out, ld_settle_db *db)
{
    *out = take(db);
    int rc = *out ? 0 : open_now(out, db);
    if (rc == 0)
        atomic_fetch_add(&db->connections, 1);
    return rc;
}

void ld_settle_db_disconnect(ld_settle_db *db, PGconn *c)
{
    int keep =
        c && PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE;
    pthread_mutex_lock(&db->lock);
    if (keep && db->stocked < db->stock_cap)
        db->stock[db->stocked++] = c;
    else
        keep = 0;
    pthread_mutex_unlock(&db->lock);
    if (!keep && c)
        PQfinish(c);
}

/* --- The threads strategy's pool -------------------------------------------------- */

struct ld_settle_db_pool {
    ld_settle_db *db;
    pthread_mutex_t lock;
    pthread_cond_t freed;
    size_t n, idle; /* conn[0..idle) are free */
    ld_hist wait;   /* each take's wait for a free connection, in ns */
    unsigned waited;
    PGconn *conn[];
};

int ld_settle_db_pool_open(ld_settle_db_pool **out, ld_settle_db *db, size_t threads)
{
    size_t n = db->pool < threads ? db->pool : threads;
    ld_settle_db_pool *p = calloc(1, sizeof *p + n * sizeof p->conn[0]);
    if (!p)
        return -ENOMEM;
    p->db = db;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->freed, NULL);
    int rc = 0;
    for (; rc == 0 && p->n < n; p->n++)
        rc = ld_settle_db_connect(&p->conn[p->n], db);
    if (rc != 0) {
        p->n--; /* the one that failed */
        ld_settle_db_pool_close(p);
        return rc;
    }
    p->idle = p->n;
    *out = p;
    return 0;
}

PGconn *ld_settle_db_pool_take(ld_settle_db_pool *p)
{
    int64_t t0 = ld_now_ns();
    pthread_mutex_lock(&p->lock);
    if (p->idle == 0)
        p->waited++;
    while (p->idle == 0)
        pthread_cond_wait(&p->freed, &p->lock);
    PGconn *c = p->conn[--p->idle];
    int64_t ns = ld_now_ns() - t0;
    ld_hist_add(&p->wait, ns > 0 ? (uint64_t)ns : 0);
    pthread_mutex_unlock(&p->lock);
    return c;
}

/* A broken connection goes back too: the next call on it fails at once, as the run's
 * first error has, and no thread waits for a connection that never comes back. */
void ld_settle_db_pool_give(ld_settle_db_pool *p, PGconn *c)
{
    pthread_mutex_lock(&p->lock);
    p->conn[p->idle++] = c;
    pthread_cond_signal(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

void ld_settle_db_pool_close(ld_settle_db_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->db->lock);
    p->db->pooled = p->n;
    p->db->wait = p->wait;
    p->db->waited = p->waited;
    pthread_mutex_unlock(&p->db->lock);
    for (size_t i = 0; i < p->n; i++)
        ld_settle_db_disconnect(p->db, p->conn[i]);
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* --- The carriers' pipes ------------------------------------------------------------ */

struct ld_settle_db_pipes {
    ld_settle_db *db; /* whose stock the connections go back to */
    size_t n, next;   /* calls go to pipe[next], round robin */
    ld_pg_uv *pipe[];
};

int ld_settle_db_pipes_open(ld_settle_db_pipes **out, ld_settle_db *db, uv_loop_t *loop)
{
    char why[256] = "";
    size_t n = db->pipes;
    ld_settle_db_pipes *p = calloc(1, sizeof *p + n * sizeof p->pipe[0]);
    int rc = p ? 0 : -ENOMEM;
    if (p)
        p->db = db;
    for (; rc == 0 && p->n < n; p->n++) {
        PGconn *c;
        rc = ld_settle_db_connect(&c, db);
        if (rc == 0)
            rc = ld_pg_uv_adopt(&p->pipe[p->n], loop, c, why, sizeof why);
        if (rc != 0 && why[0])
            say_lost(db, why);
    }
    if (rc != 0) {
        ld_settle_db_pipes_close(p);
        return rc;
    }
    *out = p;
    return 0;
}

void ld_settle_db_pipes_close(ld_settle_db_pipes *p)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (p->pipe[i])
            ld_settle_db_disconnect(p->db, ld_pg_uv_release(p->pipe[i]));
    free(p);
}

/* The pipe the next call goes to. */
static ld_pg_uv *next_pipe(ld_settle_db_pipes *p)
{
    ld_pg_uv *c = p->pipe[p->next];
    p->next = (p->next + 1) % p->n;
    return c;
}

/* --- The calls ---------------------------------------------------------------------- */

/* A call's parameters as text: the trade's id, and an update's status and run. */
typedef struct db_params {
    char text[3][24];
    const char *v[3];
} db_params;

static int params_of(const ld_settle_db *db, const ld_trade *t, int call, int failed,
                     db_params *p)
{
    snprintf(p->text[0], sizeof p->text[0], "%" PRIu64, t->id);
    snprintf(p->text[1], sizeof p->text[1], "%d", failed >= 0 ? LD_FAILED : LD_SETTLED);
    snprintf(p->text[2], sizeof p->text[2], "%u", db->run);
    for (int i = 0; i < 3; i++)
        p->v[i] = p->text[i];
    return call == LD_CALL_FETCH ? STMT_FETCH : STMT_UPDATE;
}

/* What an answer says: the one row a fetch reads, the one an update writes. */
static int answer(const PGresult *r, int stmt)
{
    if (stmt == STMT_FETCH)
        return PQntuples(r) == 1 ? 0 : -ENOENT;
    return strcmp(PQcmdTuples((PGresult *)r), "1") == 0 ? 0 : -ENOENT;
}

int ld_settle_db_blocking(PGconn *c, ld_settle_db *db, const ld_trade *t, int call,
                          int failed)
{
    db_params p = {0};
    int s = params_of(db, t, call, failed, &p);
    int64_t t0 = ld_now_ns();
    PGresult *r =
        PQexecPrepared(c, stmt_name[s], db->stmts[s].nparams, p.v, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    int rc =
        st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK ? answer(r, s) : ld_pg_error(c);
    if (rc == 0)
        count_trip(db, s, t0);
    if (rc == -ECONNRESET || rc == -EIO)
        say_lost(db, PQerrorMessage(c));
    PQclear(r);
    return rc;
}

/* One call in flight on a pipe: who waits for it, and how it ended. On the heap: a
 * parked green thread's stack may be frozen away while the loop answers. */
typedef struct db_wait {
    ld_settle_db *db;
    ld_pg_uv *pipe;
    int stmt;
    int rc;
    int64_t t0;         /* when it was sent */
    ld_gt *thread;      /* green: the parked thread */
    ld_settle_db_cb cb; /* callbacks: what to call */
    void *arg;
} db_wait;

static void on_answer(void *arg, int rc, const PGresult *res)
{
    db_wait *w = arg;
    w->rc = rc == 0 ? answer(res, w->stmt) : rc;
    if (w->rc == 0)
        count_trip(w->db, w->stmt, w->t0);
    if (rc == -ECONNRESET || rc == -EIO)
        say_lost(w->db, ld_pg_uv_why(w->pipe));
    if (w->thread) {
        ld_gt_unpark(w->thread);
        return;
    }
    w->cb(w->arg, w->rc);
    free(w);
}

/* Send the call; w is the answer's. */
static int send_call(ld_settle_db_pipes *pipes, ld_settle_db *db, const ld_trade *t,
                     int call, int failed, db_wait *w)
{
    ld_pg_uv *p = next_pipe(pipes);
    db_params params = {0};
    int s = params_of(db, t, call, failed, &params);
    w->t0 = ld_now_ns();
    w->db = db;
    w->pipe = p;
    w->stmt = s;
    return ld_pg_uv_send(p, stmt_name[s], db->stmts[s].nparams, params.v, on_answer, w);
}

int ld_settle_db_green(ld_settle_db_pipes *p, ld_settle_db *db, const ld_trade *t,
                       int call, int failed)
{
    db_wait *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->thread = ld_gt_self();
    int rc = send_call(p, db, t, call, failed, w);
    if (rc == 0) {
        ld_gt_park();
        rc = w->rc;
    }
    free(w);
    return rc;
}

int ld_settle_db_uv(ld_settle_db_pipes *p, ld_settle_db *db, const ld_trade *t, int call,
                    int failed, ld_settle_db_cb cb, void *arg)
{
    db_wait *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->cb = cb;
    w->arg = arg;
    int rc = send_call(p, db, t, call, failed, w);
    if (rc != 0)
        free(w);
    return rc;
}

/* --- The proof ---------------------------------------------------------------------- */

typedef struct db_row {
    uint64_t id;
    size_t index;
} db_row;

static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const db_row *)a)->id, y = ((const db_row *)b)->id;
    return (x > y) - (x < y);
}

/* The rank's trades in id order, as the query returns them. */
static db_row *sorted_trades(const ld_job_input *in)
{
    db_row *rows = malloc((in->n ? in->n : 1) * sizeof *rows);
    for (size_t i = 0; rows && i < in->n; i++)
        rows[i] = (db_row){in->trades[i].id, i};
    if (rows)
        qsort(rows, in->n, sizeof *rows, by_id);
    return rows;
}

/* The ids as a bigint[] literal: {1,2,...}. */
static char *id_array(const db_row *rows, size_t n)
{
    size_t len = 2 + n * 21, used = 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '{';
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(s + used, len - used, "%s%" PRIu64, i ? "," : "",
                                 rows[i].id);
    snprintf(s + used, len - used, "}");
    return s;
}

/* Row k of r against trade rows[k]: the status this run wrote. */
static int compare(const ld_settle_db *db, const ld_job_input *in, const PGresult *r,
                   const db_row *rows)
{
    const ld_settle_result *res = in->results;
    if ((size_t)PQntuples(r) != in->n) {
        ld_why_say("the database at %s holds %d of this rank's %zu trades", db->where,
                   PQntuples(r), in->n);
        return -EPROTO;
    }
    for (size_t k = 0; k < in->n; k++) {
        const ld_settle_result *want = &res[rows[k].index];
        int null = PQgetisnull(r, (int)k, 1);
        long status = null ? -1 : strtol(PQgetvalue(r, (int)k, 1), NULL, 10);
        unsigned long run = strtoul(PQgetvalue(r, (int)k, 2), NULL, 10);
        if (status == want->status && run == db->run)
            continue;
        ld_why_say("trade %" PRIu64 " is %s%ld in the database at %s (run %ld) but %u "
                   "in the results (run %u)",
                   rows[k].id, null ? "NULL " : "", status, db->where,
                   strtol(PQgetvalue(r, (int)k, 2), NULL, 10), want->status, db->run);
        return -EPROTO;
    }
    return 0;
}

/* The server's client backends now, the check's own among them, as db_backends:
 * every rank's stock stays open until the job is over, so a server the ranks share
 * (--db-url rank0, or one URL) counts all of theirs, and a rank's own only its own. */
static int count_backends(PGconn *c, ld_figures *f)
{
    PGresult *r = PQexec(c, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = "
                            "'client backend'");
    int rc =
        PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? 0 : ld_pg_error(c);
    if (rc == 0)
        ld_figure_add(f, "db_backends", strtod(PQgetvalue(r, 0, 0), NULL), "");
    PQclear(r);
    return rc;
}

/* Every trade of the rank read back in one query and compared with its result, and
 * the server's backends counted. */
static int verify(ld_settle_db *db, const ld_job_input *in)
{
    PGconn *c;
    db_row *rows = sorted_trades(in);
    char *ids = rows ? id_array(rows, in->n) : NULL;
    char why[256] = "";
    int rc = ids ? ld_pg_connect(&c, db->url, password_of(db), NULL, 0, why, sizeof why)
                 : -ENOMEM;
    if (rc == -ECONNREFUSED)
        say_lost(db, why);
    if (rc == 0) {
        char sql[192];
        snprintf(sql, sizeof sql,
                 "SELECT id, status, run FROM %s.trades WHERE id = ANY($1::bigint[]) "
                 "ORDER BY id",
                 db->schema);
        const char *v[1] = {ids};
        PGresult *r = PQexecParams(c, sql, 1, NULL, v, NULL, NULL, 0);
        rc = PQresultStatus(r) == PGRES_TUPLES_OK ? compare(db, in, r, rows)
                                                  : ld_pg_error(c);
        PQclear(r);
        if (rc == 0)
            rc = count_backends(c, in->figures);
        if (rc == -ECONNRESET || rc == -EIO)
            say_lost(db, PQerrorMessage(c));
        PQfinish(c);
    }
    free(ids);
    free(rows);
    return rc;
}

/* The run's round trips as figures, in ms, the connections it took and those it had
 * to open itself; then a fresh start. */
static void figures(ld_settle_db *db, ld_figures *f)
{
    static const char *const name[STMTS][3] = {
        {"db_fetch_p50", "db_fetch_p99", "db_fetch_max"},
        {"db_update_p50", "db_update_p99", "db_update_max"}};
    for (int s = 0; f && s < STMTS; s++) {
        ld_figure_add(f, name[s][0], (double)ld_hist_quantile(&db->trip[s], 0.5) / 1e6,
                      "ms");
        ld_figure_add(f, name[s][1], (double)ld_hist_quantile(&db->trip[s], 0.99) / 1e6,
                      "ms");
        ld_figure_add(f, name[s][2], (double)ld_hist_max(&db->trip[s]) / 1e6, "ms");
    }
    if (f) {
        ld_figure_add(f, "db_connections", atomic_load(&db->connections), "");
        ld_figure_add(f, "db_opened", atomic_load(&db->opened), "");
    }
    if (f && db->pooled) {
        ld_figure_add(f, "db_wait_p50", (double)ld_hist_quantile(&db->wait, 0.5) / 1e6,
                      "ms");
        ld_figure_add(f, "db_wait_p99", (double)ld_hist_quantile(&db->wait, 0.99) / 1e6,
                      "ms");
        ld_figure_add(f, "db_wait_max", (double)ld_hist_max(&db->wait) / 1e6, "ms");
        ld_figure_add(f, "db_waited", db->waited, "");
    }
    db->pooled = 0;
    db->waited = 0;
    memset(&db->wait, 0, sizeof db->wait);
    memset(db->trip, 0, sizeof db->trip);
    atomic_store(&db->connections, 0);
    atomic_store(&db->opened, 0);
}

int ld_settle_db_end(ld_settle_db *db, const ld_job_input *in, int rc)
{
    figures(db, in->figures);
    if (rc == 0)
        rc = verify(db, in);
    db->run++;
    return rc;
}
