/* cli.c: the small programs' bad-input messages, version and number parsing (cli.h). */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *ld_cli_program = "loomdist";

/* The message quotes what the user typed, which may hold a newline or a terminal
 * escape: each control character shows as '?', so the message stays one line. */
void ld_cli_bad(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    fprintf(stderr, "%s: %s (try --help)\n", ld_cli_program, msg);
    exit(2);
}

/* Through stdout by name, as ld_cli_bad writes stderr: the fuzz harnesses
 * (tests/fuzz/fuzz_cli.h) catch both streams by redefining them. */
void ld_cli_version(void)
{
    fprintf(stdout, "%s %s (git %s)\n", ld_cli_program, LD_VERSION, LD_GIT_COMMIT);
}

/* Digits only: strtoull would take a sign, spaces and a wrap-around for them. */
uint64_t ld_cli_count(const char *name, const char *arg, uint64_t min, uint64_t max)
{
    char *end;

    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 || v < min || v > max)
        ld_cli_bad("%s: expected a whole number from %" PRIu64 " to %" PRIu64
                   ", got '%s'",
                   name, min, max, arg);
    return v;
}
