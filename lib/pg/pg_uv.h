/* pg_uv.h: one PostgreSQL connection on a uv_loop, in libpq's pipeline mode, so that
 * many callers on that loop have queries in flight on it at once.
 *
 * Each query is a prepared statement followed by its own sync point, so each runs as
 * a transaction of its own and a failed one aborts no other. Queries go out in the
 * order they are sent and their answers come back in that order; each answer is
 * handed to its callback on the loop, which the connection's socket wakes through a
 * uv_poll. The poll is active only while a query is in flight, so an idle connection
 * keeps no loop alive.
 *
 * Errors. A callback gets rc 0 and the query's result (freed once the callback
 * returns), or a negative errno and no result: -EIO for a query the server refused,
 * -ECONNRESET once the connection is gone, which every query then in flight and every
 * later one gets. ld_pg_uv_why says what libpq said of the first error.
 *
 * Whose. The connection belongs to its loop's thread; every call is made there.
 */
#ifndef LD_PG_UV_H
#define LD_PG_UV_H

#include <uv.h>

#include "pg.h"

typedef struct ld_pg_uv ld_pg_uv;

/* The answer to one query: rc, and the result when rc is 0. */
typedef void (*ld_pg_uv_cb)(void *arg, int rc, const PGresult *res);

/* Put conn, a blocking connection made already (before the clock, its statements
 * prepared), in pipeline mode on loop; *out then owns it, and on failure conn is
 * closed. */
int ld_pg_uv_adopt(ld_pg_uv **out, uv_loop_t *loop, PGconn *conn, char *why, size_t len);

/* Send prepared statement `stmt` with its text parameters; cb(arg, ...) is called with
 * its answer, never from within this call. 0, or -ENOMEM. */
int ld_pg_uv_send(ld_pg_uv *c, const char *stmt, int nparams, const char *const *values,
                  ld_pg_uv_cb cb, void *arg);

/* What libpq said of the connection's first error, or "". */
const char *ld_pg_uv_why(const ld_pg_uv *c);

/* Close c once no query is in flight on it (callbacks of those still in flight get
 * -ECANCELED). The memory goes at the loop's next turn. NULL does nothing. */
void ld_pg_uv_close(ld_pg_uv *c);

/* As ld_pg_uv_close, but hand back its connection, blocking and out of pipeline mode,
 * for another user: when it is sound and had nothing in flight. Else NULL (it is
 * closed). */
PGconn *ld_pg_uv_release(ld_pg_uv *c);

#endif
