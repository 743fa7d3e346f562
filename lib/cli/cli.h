/* cli.h: what loomdist's small programs (loomdist-clearinghouse, loomdist-load,
 * loomdist-pool-server, loomdist-models-run, loomdist-forks, loomdist-pingpong) say
 * about their version and a bad command line, alike: for a bad one, one line naming
 * the program, "(try --help)", and exit status 2; and the option table most of them
 * parse their command line by (ld_cli_parse). Program code: it exits, which nothing
 * below a program's main may do. */
#ifndef LD_CLI_H
#define LD_CLI_H

#include <stddef.h>
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

/* What an option of a table takes, and where its value goes. */
typedef enum ld_cli_kind {
    LD_CLI_FLAG,   /* no value: the int at where becomes 1 */
    LD_CLI_COUNT,  /* a whole number in [count.min, count.max], as ld_cli_count reads
                      it, into the integer of size bytes at where */
    LD_CLI_MS,     /* a real number of ms in [ms.min, ms.max], into the double at where */
    LD_CLI_CHOICE, /* one of choices' names, whose value goes into the integer (or
                      enum) of size bytes at where */
    LD_CLI_CALL,   /* the program's own parser: call(name, arg, where) */
} ld_cli_kind;

/* A name an LD_CLI_CHOICE option takes, and the value it stands for. */
typedef struct ld_cli_choice {
    const char *name; /* NULL ends a list */
    int value;
} ld_cli_choice;

/* An option's own parser: arg into where, or ld_cli_bad. name is the option as typed
 * in full ("--listen"), for the message. */
typedef void ld_cli_call(const char *name, const char *arg, void *where);

/* One option of a program's table; the LD_CLI_OPT_* macros below make each kind. */
typedef struct ld_cli_opt {
    const char *name; /* without the "--"; NULL ends a table */
    ld_cli_kind kind;
    void *where;
    size_t size; /* LD_CLI_COUNT, LD_CLI_CHOICE: sizeof *where, 4 or 8 */
    union {
        struct {
            uint64_t min, max;
        } count;
        struct {
            double min, max;
        } ms;
        const ld_cli_choice *choices;
        ld_cli_call *call;
    };
} ld_cli_opt;

/* The size of the integer at w, which must be 4 or 8 bytes (else a compile error:
 * an array of -1 chars). */
#define LD_CLI_SIZE(w)                                                                   \
    (sizeof *(w) + 0 * sizeof(char[sizeof *(w) == 4 || sizeof *(w) == 8 ? 1 : -1]))

/* A flag's and a time's where, through the type each must have: a where of another
 * type does not compile (-Werror=incompatible-pointer-types). */
static inline void *ld_cli_flag_at(int *where)
{
    return where;
}

static inline void *ld_cli_ms_at(double *where)
{
    return where;
}

/* The rows of a table, one per kind; each where is checked against its kind's type. */
/* clang-format off */
#define LD_CLI_OPT_FLAG(n, w)                                                            \
    {.name = (n), .kind = LD_CLI_FLAG, .where = ld_cli_flag_at(w)}
#define LD_CLI_OPT_COUNT(n, w, lo, hi)                                                   \
    {.name = (n), .kind = LD_CLI_COUNT, .where = (w), .size = LD_CLI_SIZE(w),            \
     .count = {(lo), (hi)}}
#define LD_CLI_OPT_MS(n, w, lo, hi)                                                      \
    {.name = (n), .kind = LD_CLI_MS, .where = ld_cli_ms_at(w),                          \
     .ms = {(lo), (hi)}}
#define LD_CLI_OPT_CHOICE(n, w, list)                                                    \
    {.name = (n), .kind = LD_CLI_CHOICE, .where = (w), .size = LD_CLI_SIZE(w),           \
     .choices = (list)}
#define LD_CLI_OPT_CALL(n, w, fn)                                                        \
    {.name = (n), .kind = LD_CLI_CALL, .where = (w), .call = (fn)}
/* clang-format on */

/* The most options a table holds, --help and --version aside. */
#define LD_CLI_OPTS_MAX 32

/* How a program's command line is read, beyond its table. */
enum {
    LD_CLI_VERSION = 1,    /* --version prints ld_cli_version's line and exits 0 */
    LD_CLI_SHORT_HELP = 2, /* -h is --help */
};

/* A program's command line: its options, its --help text, how many arguments may
 * follow the options, and the LD_CLI_* flags above. */
typedef struct ld_cli_spec {
    const char *usage;      /* --help's text, printed as is on stdout */
    const ld_cli_opt *opts; /* ended by a row with no name */
    int operands;           /* arguments besides the options, at most */
    unsigned flags;
} ld_cli_spec;

/* argv's options, left to right, each value where its row says; --help (and
 * --version, if the spec has it) print and exit 0; an unknown option, a missing or bad
 * value, or an argument past spec->operands, ld_cli_bad. Returns the index in argv of
 * the first argument that is no option (GNU getopt moves them to the end). */
int ld_cli_parse(const ld_cli_spec *spec, int argc, char **argv);

#endif
