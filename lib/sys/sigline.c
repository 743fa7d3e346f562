/* sigline.c: a line built and written without stdio, for signal handlers. */
#include "sigline.h"

#include <errno.h>
#include <unistd.h>

void ld_sigline_init(ld_sigline *l)
{
    l->len = 0;
}

/* Byte by byte: strlen and memcpy are not on POSIX's list of safe functions. */
void ld_sigline_str(ld_sigline *l, const char *s)
{
    while (*s != '\0' && l->len < LD_SIGLINE_MAX)
        l->buf[l->len++] = *s++;
}

/* The digits come out lowest first, so they are made backwards in a buffer of their
 * own; 20 is enough for any uint64_t. */
void ld_sigline_u64(ld_sigline *l, uint64_t v)
{
    char digits[20];
    size_t n = 0;

    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0 && l->len < LD_SIGLINE_MAX)
        l->buf[l->len++] = digits[--n];
}

/* A pipe or terminal may take part of the line; the rest follows at once. */
void ld_sigline_write(const ld_sigline *l, int fd)
{
    int saved = errno;
    size_t off = 0;

    while (off < l->len) {
        ssize_t w = write(fd, l->buf + off, l->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    errno = saved;
}
