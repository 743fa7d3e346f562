/* pg.h: PostgreSQL connections through libpq, made before any query is timed.
 *
 * A connection is opened from a URL (postgresql://...) or, for the word "env", from
 * libpq's own environment (PGHOST, PGPORT, PGUSER, PGDATABASE), with a connect timeout
 * of LD_PG_CONNECT_TIMEOUT_S seconds, and its statements are prepared at once, so that
 * every later query is one round trip of a prepared statement.
 *
 * Errors are negative errno codes, never exits: -ECONNREFUSED for a server that cannot
 * be reached or refuses the session, -EINVAL for a URL libpq cannot parse, -EIO for a
 * statement the server refused, -ENOMEM. Where a `why` buffer is given, the first line
 * of libpq's own message goes there.
 */
#ifndef LD_PG_H
#define LD_PG_H

#include <stddef.h>

/* libpq's own forward declarations, so that no user of this header includes libpq-fe.h.
 */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

#define LD_PG_CONNECT_TIMEOUT_S 5

/* A statement to prepare on every connection: its name and its SQL ($1, $2, ...). */
typedef struct ld_pg_stmt {
    const char *name;
    const char *sql;
    int nparams;
} ld_pg_stmt;

/* Whether url is a URL libpq parses, or "env": 0, or -EINVAL with libpq's why. */
int ld_pg_url_check(const char *url, char *why, size_t len);

/* A blocking connection to url with the n statements prepared on it. password, when not
 * NULL, goes to libpq beside the URL, never in it (a private server's, made per run);
 * NULL leaves libpq's own ways: the URL's, PGPASSWORD, the password file. */
int ld_pg_connect(PGconn **out, const char *url, const char *password,
                  const ld_pg_stmt *stmts, size_t n, char *why, size_t len);

/* url as a message may show it, into out[0..len): its user information (user:password@)
 * and any password= of its query string masked as "***". */
void ld_pg_url_mask(const char *url, char *out, size_t len);

/* word as a message or a results file may show it: masked as a URL when it holds a
 * "://" or a "password=" (it may be a URL or a connection string given in an option,
 * or part of a command line), else copied; cut at len. */
void ld_pg_word_mask(const char *word, char *out, size_t len);

/* Run sql (no parameters) on c and wait for it: 0, or -EIO with the server's why. */
int ld_pg_exec(PGconn *c, const char *sql, char *why, size_t len);

/* The first line of text (a libpq message) into why[0..len); nothing when why is NULL. */
void ld_pg_why(const char *text, char *why, size_t len);

/* The negative errno a failed call on c stands for: -ECONNRESET when the connection is
 * gone, -EIO when the server refused one statement. */
int ld_pg_error(const PGconn *c);

#endif
