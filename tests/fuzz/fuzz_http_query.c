/* fuzz_http_query.c: arbitrary queries and names into ld_http_query_get
 * (lib/http/include/http.h), which every clearinghouse request's parameters go through.
 * An input is a byte that picks the output's size (0 to 63), the name, a NUL, and the
 * query (up to the next NUL, as it is a string).
 *
 * What must hold for every input, or the harness aborts:
 * - the result is a length, or -ENOENT, -EINVAL or -ENOSPC;
 * - a length is below the size, with out NUL-terminated there and no NUL before it;
 * - the answer agrees with one from a buffer large enough for any value: the same
 *   value where it fits, else -ENOSPC (or -EINVAL, where a bad escape lies past what
 *   fits), and the same -ENOENT or -EINVAL;
 * - the parameter is found exactly where the query has a key equal to the name, and
 *   a value with no escape and no '+' comes back as it is in the query.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"

#define QUERY_MAX 4096

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_http_query: %s\n", what);
        abort();
    }
}

/* The raw value of the first parameter whose key is name, as the query holds it:
 * its start and *len, or NULL. */
static const char *raw_value(const char *query, const char *name, size_t *len)
{
    for (const char *at = query; *at;) {
        const char *amp = strchr(at, '&');
        size_t field = amp ? (size_t)(amp - at) : strlen(at);
        const char *eq = memchr(at, '=', field);
        size_t key = eq ? (size_t)(eq - at) : field;
        if (key == strlen(name) && strncmp(at, name, key) == 0) {
            *len = eq ? field - key - 1 : 0;
            return eq ? eq + 1 : at + field;
        }
        at = amp ? amp + 1 : at + field;
    }
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char text[QUERY_MAX + 2], big[QUERY_MAX + 1], out[64];

    if (size == 0 || size > QUERY_MAX)
        return 0;
    size_t out_size = data[0] % 64;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    text[size] = '\0';
    const char *name = text, *query = text + strlen(text) + 1; /* no NUL: "" */
    int rb = ld_http_query_get(query, name, big, sizeof big);
    int r = ld_http_query_get(query, name, out, out_size);
    require(rb >= 0 || rb == -ENOENT || rb == -EINVAL, "an answer not documented");
    require(r >= 0 || r == -ENOENT || r == -EINVAL || r == -ENOSPC,
            "an answer not documented");
    if (rb >= 0) {
        require((size_t)rb < sizeof big && big[rb] == '\0' && strlen(big) == (size_t)rb,
                "a value not NUL-terminated at its length, or with a NUL in it");
        require(
            ((size_t)rb < out_size && r == rb && memcmp(out, big, (size_t)rb + 1) == 0) ||
                ((size_t)rb >= out_size && r == -ENOSPC),
            "a value that depends on the room given");
    } else if (rb == -EINVAL) {
        require(r == -EINVAL || r == -ENOSPC, "a bad escape that depends on the room");
    } else {
        require(r == rb, "a missing parameter that depends on the room");
    }
    size_t len;
    const char *raw = raw_value(query, name, &len);
    require((raw == NULL) == (rb == -ENOENT), "a parameter found where no key names it");
    if (raw && !memchr(raw, '%', len) && !memchr(raw, '+', len))
        require(rb == (int)len && memcmp(big, raw, len) == 0,
                "a plain value that did not come back as it is");
    return 0;
}
