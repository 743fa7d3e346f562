/* sigline.h: one line of text written from a signal handler.
 *
 * A handler may call only async-signal-safe functions: no stdio, no malloc, no locks,
 * not even the string functions everywhere. An ld_sigline is built in a fixed buffer,
 * on the handler's own stack, with the appends below, each of which drops whatever no
 * longer fits; it then goes out in one write(2), so the lines of two threads never
 * interleave. Every function here is async-signal-safe.
 */
#ifndef LD_SIGLINE_H
#define LD_SIGLINE_H

#include <stddef.h>
#include <stdint.h>

#define LD_SIGLINE_MAX 256

typedef struct ld_sigline {
    size_t len;
    char buf[LD_SIGLINE_MAX];
} ld_sigline;

/* An empty line. */
void ld_sigline_init(ld_sigline *l);

/* Append a string, or v in decimal. */
void ld_sigline_str(ld_sigline *l, const char *s);
void ld_sigline_u64(ld_sigline *l, uint64_t v);

/* Write the line to fd, retrying a short or interrupted write. errno is left as it
 * was; an error is dropped, since a handler has nowhere to report it. */
void ld_sigline_write(const ld_sigline *l, int fd);

#endif
