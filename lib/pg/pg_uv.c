/* pg_uv.c: a pipelined libpq connection driven by a uv_poll on its socket (pg_uv.h).
 *
 * The queries in flight are a FIFO of what each waits for. An answer is, in pipeline
 * mode, the query's result, a NULL that ends it, then the result of its sync point:
 * the query is over at the sync, and its callback gets the first result it kept.
 */
#include "pg_uv.h"

#include <errno.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pg_query {
    struct pg_query *next;
    ld_pg_uv_cb cb;
    void *arg;
    PGresult *res; /* its first result, until its sync */
} pg_query;

struct ld_pg_uv {
    uv_poll_t poll;   /* on fd */
    uv_timer_t later; /* hands a broken connection's queries their error */
    PGconn *conn;
    int fd;    /* a dup of libpq's socket, so that the poll's stays open if libpq
                  closes its own on an error */
    int holds; /* handles not yet closed */
    pg_query *head, *tail; /* in flight, oldest first */
    int events;            /* what the poll waits for now; 0: stopped */
    int error;             /* 0, or what every query gets since the connection broke */
    bool closing;
    char why[256];
};

/* Query q of c is over: its callback, then its memory. A refusal's why is kept when
 * it is the connection's first. */
static void finish(ld_pg_uv *c, pg_query *q, int rc)
{
    if (rc == 0 && PQresultStatus(q->res) != PGRES_TUPLES_OK &&
        PQresultStatus(q->res) != PGRES_COMMAND_OK) {
        rc = -EIO;
        if (!c->why[0])
            ld_pg_why(PQresultErrorMessage(q->res), c->why, sizeof c->why);
    }
    q->cb(q->arg, rc, rc == 0 ? q->res : NULL);
    PQclear(q->res);
    free(q);
}

/* The oldest query is over. */
static void pop(ld_pg_uv *c, int rc)
{
    pg_query *q = c->head;
    c->head = q->next;
    if (!c->head)
        c->tail = NULL;
    finish(c, q, rc);
}

/* The first error said once; every query in flight gets it. A connection that ends
 * in pipeline mode often leaves libpq no message of its own. */
static void fail_all(ld_pg_uv *c, int rc)
{
    if (!c->error) {
        c->error = rc;
        if (!c->why[0])
            ld_pg_why(PQerrorMessage(c->conn), c->why, sizeof c->why);
        if (!c->why[0])
            ld_pg_why("the server closed the connection", c->why, sizeof c->why);
    }
    while (c->head)
        pop(c, c->error);
}

static void on_later(uv_timer_t *t)
{
    fail_all(t->data, ((ld_pg_uv *)t->data)->error);
}

/* Break the connection with rc, its queries answered on the loop's next turn: a send
 * never calls back from within itself. */
static void fail_later(ld_pg_uv *c, int rc)
{
    if (!c->error) {
        c->error = rc;
        if (!c->why[0])
            ld_pg_why(PQerrorMessage(c->conn), c->why, sizeof c->why);
    }
    uv_timer_start(&c->later, on_later, 0, 0);
}

static void on_poll(uv_poll_t *h, int status, int events);

/* Poll for what is owed: answers while queries are in flight, room to write while
 * libpq holds unsent bytes; nothing once the connection is idle or broken. */
static void update_poll(ld_pg_uv *c, bool unsent)
{
    if (c->closing) /* uv_close stops the poll */
        return;
    int want = c->error ? 0 : (c->head ? UV_READABLE : 0);
    if (unsent && !c->error)
        want |= UV_WRITABLE;
    if (want == c->events)
        return;
    c->events = want;
    if (want)
        uv_poll_start(&c->poll, want, on_poll);
    else
        uv_poll_stop(&c->poll);
}

/* Send what libpq holds: whether some is still unsent, or the connection broke. */
static bool flush(ld_pg_uv *c)
{
    int rc = PQflush(c->conn);
    if (rc < 0)
        fail_all(c, -ECONNRESET);
    return rc == 1;
}

/* Hand each whole answer that has come to its query. Two NULLs in a row mean nothing
 * more has come for now. */
static void take_results(ld_pg_uv *c)
{
    bool was_null = false;
    while (c->head && !c->error && !c->closing && !PQisBusy(c->conn)) {
        PGresult *r = PQgetResult(c->conn);
        if (!r) {
            if (was_null)
                return;
            was_null = true;
            continue;
        }
        was_null = false;
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            pop(c, 0);
        } else if (!c->head->res) {
            c->head->res = r;
        } else {
            PQclear(r);
        }
    }
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    ld_pg_uv *c = h->data;
    bool unsent = false;
    if (status < 0) {
        fail_all(c, -ECONNRESET);
    } else if (!c->closing) {
        if (events & UV_WRITABLE)
            unsent = flush(c);
        if ((events & UV_READABLE) && !c->error) {
            if (!PQconsumeInput(c->conn))
                fail_all(c, -ECONNRESET);
            take_results(c);
        }
        if (!c->error && !c->closing && PQstatus(c->conn) == CONNECTION_BAD)
            fail_all(c, -ECONNRESET);
    }
    update_poll(c, unsent);
}

int ld_pg_uv_adopt(ld_pg_uv **out, uv_loop_t *loop, PGconn *conn, char *why, size_t len)
{
    ld_pg_uv *c = calloc(1, sizeof *c);
    if (!c) {
        PQfinish(conn);
        return -ENOMEM;
    }
    c->conn = conn;
    int rc = 0;
    if (PQsetnonblocking(c->conn, 1) != 0 || !PQenterPipelineMode(c->conn)) {
        ld_pg_why(PQerrorMessage(c->conn), why, len);
        rc = -EIO;
    }
    c->fd = rc == 0 ? dup(PQsocket(c->conn)) : -1;
    if (rc == 0 && c->fd < 0)
        rc = -errno;
    if (rc == 0)
        rc = uv_poll_init_socket(loop, &c->poll, c->fd);
    if (rc != 0) {
        if (c->fd >= 0)
            close(c->fd);
        PQfinish(c->conn);
        free(c);
        return rc;
    }
    uv_timer_init(loop, &c->later);
    c->poll.data = c;
    c->later.data = c;
    c->holds = 2;
    *out = c;
    return 0;
}

int ld_pg_uv_send(ld_pg_uv *c, const char *stmt, int nparams, const char *const *values,
                  ld_pg_uv_cb cb, void *arg)
{
    pg_query *q = calloc(1, sizeof *q);
    if (!q)
        return -ENOMEM;
    *q = (pg_query){.cb = cb, .arg = arg};
    if (c->tail)
        c->tail->next = q;
    else
        c->head = q;
    c->tail = q;
    if (c->error || !PQsendQueryPrepared(c->conn, stmt, nparams, values, NULL, NULL, 0) ||
        !PQpipelineSync(c->conn)) {
        fail_later(c, -ECONNRESET);
        update_poll(c, false);
        return 0;
    }
    int unsent = PQflush(c->conn);
    if (unsent < 0)
        fail_later(c, -ECONNRESET);
    update_poll(c, unsent == 1);
    return 0;
}

const char *ld_pg_uv_why(const ld_pg_uv *c)
{
    return c->why;
}

/* The last handle closed frees the connection. */
static void on_closed(uv_handle_t *h)
{
    ld_pg_uv *c = h->data;
    if (--c->holds > 0)
        return;
    close(c->fd);
    if (c->conn)
        PQfinish(c->conn);
    free(c);
}

void ld_pg_uv_close(ld_pg_uv *c)
{
    if (!c)
        return;
    c->closing = true;
    while (c->head)
        pop(c, -ECANCELED);
    uv_close((uv_handle_t *)&c->poll, on_closed);
    uv_close((uv_handle_t *)&c->later, on_closed);
}

PGconn *ld_pg_uv_release(ld_pg_uv *c)
{
    PGconn *conn = NULL;
    if (c && !c->head && !c->error && PQstatus(c->conn) == CONNECTION_OK &&
        PQexitPipelineMode(c->conn) && PQsetnonblocking(c->conn, 0) == 0) {
        conn = c->conn;
        c->conn = NULL; /* the handles close without it */
    }
    ld_pg_uv_close(c);
    return conn;
}
