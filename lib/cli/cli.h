/* cli.h: what loomdist's small programs (loomdist-clearinghouse, loomdist-load,
 * loomdist-pool-server, loomdist-forks) say about their version and a bad command
 * line, alike: for a bad one, one line naming the program, "(try --help)", and exit
 * status 2. Program code: it exits, which nothing
 * below a program's main may do. */
#ifndef LD_CLI_H
#define LD_CLI_H

#include <stdint.h>

/* The program's name, for the messages; each main sets it first. */
extern const char *ld_cli_program;

/* "<program>: <message> (try --help)" on stderr, and exit 2. */
__attribute__((noreturn, format(printf, 1, 2))) void ld_cli_bad(const char *fmt, ...);

/* "<program> <version> (git <commit>)" on stdout, as `loomdist --version` prints it:
 * the first line help2man reads for the man page's version. */
void ld_cli_version(void);

/* arg as a whole number in [min, max], or ld_cli_bad naming the option `name`. */
uint64_t ld_cli_count(const char *name, const char *arg, uint64_t min, uint64_t max);

#endif
