/* pg.c: blocking libpq connections with their statements prepared (pg.h). */
#include "pg.h"

#include <errno.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

void ld_pg_why(const char *text, char *why, size_t len)
{
    if (!why || len == 0)
        return;
    size_t n = strcspn(text ? text : "", "\n");
    if (n >= len)
        n = len - 1;
    memcpy(why, text ? text : "", n);
    why[n] = '\0';
}

int ld_pg_error(const PGconn *c)
{
    return PQstatus(c) == CONNECTION_OK ? -EIO : -ECONNRESET;
}

int ld_pg_url_check(const char *url, char *why, size_t len)
{
    char *err = NULL;
    if (strcmp(url, "env") == 0)
        return 0;
    PQconninfoOption *opts = PQconninfoParse(url, &err);
    int ok = opts != NULL && (strncmp(url, "postgresql://", 13) == 0 ||
                              strncmp(url, "postgres://", 11) == 0);
    ld_pg_why(err ? err : "not a postgresql:// or postgres:// URL", why, len);
    PQconninfoFree(opts);
    PQfreemem(err);
    return ok ? 0 : -EINVAL;
}

/* Every statement prepared on c, stopping at the first the server refuses. */
static int prepare_all(PGconn *c, const ld_pg_stmt *stmts, size_t n, char *why,
                       size_t len)
{
    for (size_t i = 0; i < n; i++) {
        PGresult *r = PQprepare(c, stmts[i].name, stmts[i].sql, stmts[i].nparams, NULL);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            ld_pg_why(PQerrorMessage(c), why, len);
        PQclear(r);
        if (!ok)
            return ld_pg_error(c);
    }
    return 0;
}

/* The server's notices (a DROP's cascade, say) are not the user's business. */
static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* "env" is libpq's defaults: an empty dbname lets the environment fill everything. The
 * keys after dbname override what its URL says, so a password given apart wins. */
int ld_pg_connect(PGconn **out, const char *url, const char *password,
                  const ld_pg_stmt *stmts, size_t n, char *why, size_t len)
{
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%d", LD_PG_CONNECT_TIMEOUT_S);
    const char *keys[] = {"dbname", "connect_timeout", "application_name",
                          password ? "password" : NULL, NULL};
    const char *values[] = {strcmp(url, "env") == 0 ? "" : url, timeout, "loomdist",
                            password, NULL};
    PGconn *c = PQconnectdbParams(keys, values, 1);
    if (!c)
        return -ENOMEM;
    int rc = PQstatus(c) == CONNECTION_OK ? 0 : -ECONNREFUSED;
    PQsetNoticeProcessor(c, quiet, NULL);
    if (rc != 0)
        ld_pg_why(PQerrorMessage(c), why, len);
    if (rc == 0)
        rc = prepare_all(c, stmts, n, why, len);
    if (rc != 0) {
        PQfinish(c);
        return rc;
    }
    *out = c;
    return 0;
}

int ld_pg_exec(PGconn *c, const char *sql, char *why, size_t len)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (!ok)
        ld_pg_why(PQerrorMessage(c), why, len);
    PQclear(r);
    return ok ? 0 : ld_pg_error(c);
}

/* The end of a URL's authority: where its path, query or fragment begins. */
static size_t authority_end(const char *s)
{
    return strcspn(s, "/?#");
}

/* Copy s[0..n) into out at *used, cut at len. */
static void put(char *out, size_t len, size_t *used, const char *s, size_t n)
{
    int w = snprintf(out + *used, len - *used, "%.*s", (int)n, s);
    if (w > 0)
        *used += (size_t)w < len - *used ? (size_t)w : len - *used - 1;
}

void ld_pg_url_mask(const char *url, char *out, size_t len)
{
    if (!out || len == 0)
        return;
    size_t used = 0;
    out[0] = '\0';
    const char *rest = strstr(url, "://");
    rest = rest ? rest + 3 : url;
    put(out, len, &used, url, (size_t)(rest - url));
    size_t auth = authority_end(rest);
    const char *at = memchr(rest, '@', auth);
    if (at) {
        put(out, len, &used, "***", 3);
        rest = at;
    }
    /* Then the rest, each password=VALUE of the query masked. */
    for (const char *p = rest; *p;) {
        const char *key = strstr(p, "password=");
        int is_key = key && (key == url || strchr("?& =", key[-1]) != NULL);
        const char *end = key ? key + 9 : p + strlen(p);
        put(out, len, &used, p, (size_t)(end - p));
        p = end;
        if (key && is_key) {
            put(out, len, &used, "***", 3);
            p += strcspn(p, "&# ");
        }
    }
}

void ld_pg_word_mask(const char *word, char *out, size_t len)
{
    if (strstr(word, "://") || strstr(word, "password="))
        ld_pg_url_mask(word, out, len);
    else if (out && len > 0)
        snprintf(out, len, "%s", word);
}
