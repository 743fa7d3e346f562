/* test_http_client.c: the transport-free pieces of http.h: a request's bytes, query
 * parameters, reason phrases, and the response parser fed whole, split at every byte,
 * pipelined, chunked, ended by a close, cut off, and refused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "http.h"

static void test_format(void)
{
    char buf[256];
    int n = ld_http_format_request(buf, sizeof buf, "GET", "/a?b=1", "127.0.0.1:80", NULL,
                                   NULL, 0);
    const char *get = "GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n";
    CHECK(n == (int)strlen(get) && strcmp(buf, get) == 0, "GET: %d '%s'", n, buf);

    n = ld_http_format_request(buf, sizeof buf, "POST", "/p", "h", "X-A: 1\r\n", "hello",
                               5);
    const char *post =
        "POST /p HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nContent-Length: 5\r\n\r\nhello";
    CHECK(n == (int)strlen(post) && strcmp(buf, post) == 0, "POST: %d '%s'", n, buf);

    char small[8];
    n = ld_http_format_request(small, sizeof small, "POST", "/p", "h", "X-A: 1\r\n",
                               "hello", 5);
    CHECK(n == (int)strlen(post), "a short buffer gives the length needed: %d", n);
    CHECK(ld_http_format_request(buf, sizeof buf, "GET", "/a b", "h", NULL, NULL, 0) ==
              -EINVAL,
          "a space in the target");
    CHECK(ld_http_format_request(buf, sizeof buf, "GET", "/", "h\r\nX: y", NULL, NULL,
                                 0) == -EINVAL,
          "a CR LF in the host");
    CHECK(ld_http_format_request(buf, sizeof buf, "", "/", "h", NULL, NULL, 0) == -EINVAL,
          "an empty method");
}

static void test_query(void)
{
    char v[16];
    const char *q = "trade=12&seed=7&name=a%20b+c&flag&tradeX=9&empty=";

    CHECK(ld_http_query_get(q, "trade", v, sizeof v) == 2 && strcmp(v, "12") == 0,
          "trade: '%s'", v);
    CHECK(ld_http_query_get(q, "name", v, sizeof v) == 5 && strcmp(v, "a b c") == 0,
          "decoded: '%s'", v);
    CHECK(ld_http_query_get(q, "flag", v, sizeof v) == 0 && v[0] == '\0', "no value");
    CHECK(ld_http_query_get(q, "empty", v, sizeof v) == 0, "an empty value");
    CHECK(ld_http_query_get(q, "trad", v, sizeof v) == -ENOENT, "a prefix is not a name");
    CHECK(ld_http_query_get("", "a", v, sizeof v) == -ENOENT, "an empty query");
    CHECK(ld_http_query_get("a=%zz", "a", v, sizeof v) == -EINVAL, "a bad escape");
    CHECK(ld_http_query_get("a=%2", "a", v, sizeof v) == -EINVAL, "a cut escape");
    CHECK(ld_http_query_get("a=x%00y", "a", v, sizeof v) == -EINVAL, "a NUL");
    CHECK(ld_http_query_get("a=0123456789abcdef", "a", v, sizeof v) == -ENOSPC,
          "too long for out");
    CHECK(strcmp(ld_http_reason(404), "Not Found") == 0 &&
              strcmp(ld_http_reason(799), "Unknown") == 0,
          "reason phrases");
}

/* Feed text in pieces of at most step bytes; the responses' statuses and bodies, each
 * "status:body;", go to out. Returns the last feed's result. */
static int feed_all(const char *text, size_t step, int end, char *out, size_t size)
{
    ld_http_response_parser *p;
    ld_http_response res;
    size_t len = strlen(text), at = 0, o = 0;
    int rc = 0;

    out[0] = '\0';
    if (ld_http_response_parser_open(&p, 64) != 0)
        return -ENOMEM;
    while (at < len && rc >= 0) {
        size_t chunk = len - at < step ? len - at : step;
        size_t used;
        rc = ld_http_response_feed(p, text + at, chunk, &used, &res);
        at += used;
        if (rc == 1)
            o += (size_t)snprintf(out + o, size - o, "%d:%.*s;", res.status,
                                  (int)res.body_len, res.body);
    }
    if (end && rc >= 0) {
        rc = ld_http_response_end(p, &res);
        if (rc == 1)
            snprintf(out + o, size - o, "%d:%.*s;", res.status, (int)res.body_len,
                     res.body);
    }
    ld_http_response_parser_free(p);
    return rc;
}

static void test_responses(void)
{
    static const char two[] = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\npass"
                              "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
                              "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "2\r\nfa\r\n2\r\nil\r\n0\r\n\r\n";
    char out[256];

    for (size_t step = 1; step <= sizeof two; step++) {
        feed_all(two, step, 0, out, sizeof out);
        CHECK(strcmp(out, "200:pass;404:;200:fail;") == 0, "step %zu: '%s'", step, out);
    }
    int rc = feed_all("HTTP/1.0 200 OK\r\n\r\nuntil the close", 5, 1, out, sizeof out);
    CHECK(rc == 1 && strcmp(out, "200:until the close;") == 0,
          "a body ended by the close: %d '%s'", rc, out);
    rc = feed_all("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 64, 1, out,
                  sizeof out);
    CHECK(rc == -EPROTO && out[0] == '\0', "a body cut off: %d '%s'", rc, out);
    rc = feed_all("", 64, 1, out, sizeof out);
    CHECK(rc == 0, "a close with nothing under way: %d", rc);
    rc = feed_all("SSH-2.0-OpenSSH\r\n", 64, 0, out, sizeof out);
    CHECK(rc == -EPROTO, "not HTTP: %d", rc);
    rc =
        feed_all("HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n", 64, 0, out, sizeof out);
    CHECK(rc == -EMSGSIZE, "a declared body past body_max: %d", rc);
    rc = feed_all("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", 64, 0, out, sizeof out);
    CHECK(rc == 0, "a close-delimited body under way: %d", rc);
}

int main(void)
{
    test_format();
    test_query();
    test_responses();
    printf("http client helpers: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
