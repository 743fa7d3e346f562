/* http.c: what the server and every client share and no transport decides: reason
 * phrases, query parameters, a request's bytes, and a parser for responses.
 */
#include "http.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "http_request.h"

const char *ld_http_reason(int status)
{
    const char *s = http_status_str((enum http_status)status);

    return s[0] == '<' ? "Unknown" : s;
}

/* --- Queries --------------------------------------------------------------------- */

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode value[0..len) into out[0..size), NUL-terminated; its length or a negative
 * errno. */
static int query_decode(const char *value, size_t len, char *out, size_t size)
{
    size_t n = 0;

    for (size_t i = 0; i < len; i++, n++) {
        char c = value[i];
        if (c == '%') {
            int hi = i + 2 < len ? hex_digit(value[i + 1]) : -1;
            int lo = hi >= 0 ? hex_digit(value[i + 2]) : -1;
            if (lo < 0 || (hi == 0 && lo == 0))
                return -EINVAL;
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+') {
            c = ' ';
        }
        if (n + 1 >= size)
            return -ENOSPC;
        out[n] = c;
    }
    if (size == 0)
        return -ENOSPC;
    out[n] = '\0';
    return n > INT_MAX ? -ENOSPC : (int)n;
}

int ld_http_query_get(const char *query, const char *name, char *out, size_t size)
{
    size_t name_len = strlen(name);

    for (const char *at = query; *at;) {
        size_t len = strcspn(at, "&");
        const char *eq = memchr(at, '=', len);
        size_t key_len = eq ? (size_t)(eq - at) : len;
        if (key_len == name_len && memcmp(at, name, name_len) == 0) {
            const char *value = eq ? eq + 1 : at + len;
            return query_decode(value, (size_t)(at + len - value), out, size);
        }
        at += len + (at[len] == '&');
    }
    return -ENOENT;
}

/* --- Requests -------------------------------------------------------------------- */

/* A request line's word or a Host value: not empty, no space, no control byte. */
static bool word_ok(const char *s)
{
    if (!s[0])
        return false;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return false;
    return true;
}

int ld_http_format_request(char *buf, size_t size, const char *method, const char *target,
                           const char *host, const char *headers, const void *body,
                           size_t len)
{
    char length[48] = "";

    if (!word_ok(method) || !word_ok(target) || !word_ok(host))
        return -EINVAL;
    if (len > 0)
        snprintf(length, sizeof length, "Content-Length: %zu\r\n", len);
    int head = snprintf(buf, size, "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s\r\n", method,
                        target, host, headers ? headers : "", length);
    if (head < 0 || len > (size_t)(INT_MAX - head))
        return -EOVERFLOW;
    size_t total = (size_t)head + len;
    if (total < size) {
        if (len)
            memcpy(buf + head, body, len);
        buf[total] = '\0';
    }
    return (int)total;
}

/* --- Responses ------------------------------------------------------------------- */

struct ld_http_response_parser {
    http_parser parser;
    size_t body_max;
    char *body;
    size_t body_len, body_cap;
    int error;    /* what every call returns once the input was refused */
    bool started; /* a response is under way */
    bool done;    /* the last callback ended one */
};

static int on_response_begin(http_parser *hp)
{
    ld_http_response_parser *p = hp->data;

    p->started = true;
    p->body_len = 0;
    return 0;
}

static int on_response_headers(http_parser *hp)
{
    ld_http_response_parser *p = hp->data;

    /* libhttp-parser, built lenient, takes a status of fewer than three digits */
    if (hp->status_code < 100 || hp->status_code > 999) {
        p->error = -EPROTO;
        return -1;
    }
    if ((hp->flags & F_CONTENTLENGTH) && hp->content_length > p->body_max) {
        p->error = -EMSGSIZE;
        return -1;
    }
    return 0;
}

static int on_response_body(http_parser *hp, const char *at, size_t n)
{
    ld_http_response_parser *p = hp->data;

    if (n > p->body_max - p->body_len) {
        p->error = -EMSGSIZE;
        return -1;
    }
    if (ld_http_grow(&p->body, &p->body_cap, p->body_len + n + 1) != 0) {
        p->error = -ENOMEM;
        return -1;
    }
    memcpy(p->body + p->body_len, at, n);
    p->body_len += n;
    return 0;
}

/* A response read whole: pause, so the feed returns with it. */
static int on_response_complete(http_parser *hp)
{
    ld_http_response_parser *p = hp->data;

    p->started = false;
    p->done = true;
    http_parser_pause(hp, 1);
    return 0;
}

static const http_parser_settings response_settings = {
    .on_message_begin = on_response_begin,
    .on_headers_complete = on_response_headers,
    .on_body = on_response_body,
    .on_message_complete = on_response_complete,
};

int ld_http_response_parser_open(ld_http_response_parser **out, size_t body_max)
{
    ld_http_response_parser *p = calloc(1, sizeof *p);

    if (!p)
        return -ENOMEM;
    http_parser_init(&p->parser, HTTP_RESPONSE);
    p->parser.data = p;
    p->body_max = body_max;
    *out = p;
    return 0;
}

/* Run the parser over data[0..len) (len 0: the connection's end) and say what came of
 * it, as ld_http_response_feed does. */
static int response_run(ld_http_response_parser *p, const char *data, size_t len,
                        size_t *used, ld_http_response *res)
{
    size_t n = http_parser_execute(&p->parser, &response_settings, data, len);
    enum http_errno e = HTTP_PARSER_ERRNO(&p->parser);

    *used = n;
    if (e == HPE_PAUSED)
        http_parser_pause(&p->parser, 0);
    else if (e != HPE_OK && !p->error)
        p->error = -EPROTO;
    if (p->error)
        return p->error;
    if (!p->done)
        return 0;
    p->done = false;
    res->status = (int)p->parser.status_code;
    res->keep_alive = http_should_keep_alive(&p->parser);
    res->body = p->body ? p->body : "";
    res->body_len = p->body_len;
    if (p->body)
        p->body[p->body_len] = '\0';
    return 1;
}

int ld_http_response_feed(ld_http_response_parser *p, const char *data, size_t len,
                          size_t *used, ld_http_response *res)
{
    *used = 0;
    if (p->error)
        return p->error;
    if (len == 0)
        return 0;
    return response_run(p, data, len, used, res);
}

int ld_http_response_end(ld_http_response_parser *p, ld_http_response *res)
{
    size_t used;

    if (p->error)
        return p->error;
    if (!p->started)
        return 0;
    int rc = response_run(p, NULL, 0, &used, res);
    if (rc == 0)
        p->error = rc = -EPROTO;
    return rc;
}

void ld_http_response_parser_free(ld_http_response_parser *p)
{
    if (!p)
        return;
    free(p->body);
    free(p);
}
