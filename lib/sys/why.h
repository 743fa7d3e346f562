/* why.h: the one line that says why a run failed, kept for the driver to print.
 *
 * A strategy that fails returns a negative errno; an errno alone cannot name what
 * failed ("lost the database at HOST:PORT/DB: server closed the connection"). So code
 * on any thread of the process (a pool thread, a carrier, a loop's callback) may say
 * why with ld_why_say. The first reason said since the last ld_why_clear is kept and
 * every later one dropped: the first failure is the cause, the rest are its echoes.
 * A reason is one line: it is cut at its first newline and at LD_WHY_MAX - 1 bytes.
 *
 * The driver clears it before each measured run and reads it with ld_why_get once
 * the run has returned, then gathers every rank's and prints one line for the run.
 * Every function is thread-safe; none is async-signal-safe (sigline.h is).
 */
#ifndef LD_WHY_H
#define LD_WHY_H

#include <stddef.h>

#define LD_WHY_MAX 256

/* Forget the reason kept, if any. */
void ld_why_clear(void);

/* Keep this reason, printf-style, unless one is kept already: 1 when it was kept,
 * 0 when it was dropped. */
int ld_why_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The reason kept, into out[0..len) (cut to fit): its length, or 0 and "" when none
 * was said. */
size_t ld_why_get(char *out, size_t len);

#endif
