/* cli_opts.c: a program's command line read by its option table (cli.h): the one
 * getopt_long loop the small programs share, so that each main.c keeps only its table
 * and what it does with the values. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* getopt_long's value for row i of the table; --help and --version have 'h', 'V'. */
#define CLI_OPT_ROW 256

/* v into the integer of size bytes at where (LD_CLI_SIZE made it 4 or 8). */
static void opt_store(void *where, size_t size, uint64_t v)
{
    uint32_t v32 = (uint32_t)v;

    memcpy(where, size == 4 ? (void *)&v32 : (void *)&v, size);
}

/* A real number of ms in [min, max]; NaN is neither. */
static double opt_ms(const char *name, const char *arg, double min, double max)
{
    char *end;
    double v = strtod(arg, &end);

    if (end == arg || *end != '\0' || !(v >= min && v <= max))
        ld_cli_bad("%s takes a number of ms in [%g, %g], not '%s'", name, min, max, arg);
    return v;
}

/* One of the choices' names, as its value; the message lists them "a, b or c". */
static int opt_choice(const char *name, const char *arg, const ld_cli_choice *choices)
{
    char list[256] = "";

    for (const ld_cli_choice *c = choices; c->name; c++)
        if (strcmp(arg, c->name) == 0)
            return c->value;
    for (const ld_cli_choice *c = choices; c->name; c++) {
        size_t n = strlen(list);
        const char *sep = c[1].name ? ", " : " or ";
        snprintf(list + n, sizeof list - n, "%s%s", c == choices ? "" : sep, c->name);
    }
    ld_cli_bad("%s is %s, not '%s'", name, list, arg);
}

/* One option's value, arg (NULL for a flag), where its row says. */
static void opt_take(const ld_cli_opt *o, const char *arg)
{
    char name[64];

    snprintf(name, sizeof name, "--%s", o->name);
    switch (o->kind) {
    case LD_CLI_FLAG:
        *(int *)o->where = 1;
        break;
    case LD_CLI_COUNT:
        opt_store(o->where, o->size, ld_cli_count(name, arg, o->count.min, o->count.max));
        break;
    case LD_CLI_MS:
        *(double *)o->where = opt_ms(name, arg, o->ms.min, o->ms.max);
        break;
    case LD_CLI_CHOICE:
        opt_store(o->where, o->size, (uint64_t)opt_choice(name, arg, o->choices));
        break;
    case LD_CLI_CALL:
        o->call(name, arg, o->where);
        break;
    }
}

/* getopt_long's table for spec: its rows, then --help and --version (if it has it).
 * Rows past LD_CLI_OPTS_MAX are the program's mistake, said before anything runs. */
static void opt_longs(const ld_cli_spec *spec, struct option *longs)
{
    size_t n = 0;

    for (const ld_cli_opt *o = spec->opts; o->name; o++, n++) {
        if (n == LD_CLI_OPTS_MAX) {
            fprintf(stderr, "%s: more than %d options in its table\n", ld_cli_program,
                    LD_CLI_OPTS_MAX);
            abort();
        }
        longs[n] = (struct option){
            o->name, o->kind == LD_CLI_FLAG ? no_argument : required_argument, NULL,
            CLI_OPT_ROW + (int)n};
    }
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    if (spec->flags & LD_CLI_VERSION)
        longs[n++] = (struct option){"version", no_argument, NULL, 'V'};
    longs[n] = (struct option){NULL, 0, NULL, 0};
}

/* What getopt_long could not take: the one line that says so. */
__attribute__((noreturn)) static void opt_refuse(int c, char **argv)
{
    if (c == ':')
        ld_cli_bad("%s needs a value", argv[optind - 1]);
    ld_cli_bad("unknown option '%s'", argv[optind - 1]);
}

int ld_cli_parse(const ld_cli_spec *spec, int argc, char **argv)
{
    struct option longs[LD_CLI_OPTS_MAX + 3];
    const char *shorts = spec->flags & LD_CLI_SHORT_HELP ? ":h" : ":";

    opt_longs(spec, longs);
    opterr = 0; /* what getopt could not take is said once, by opt_refuse */
    for (int c; (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1;) {
        if (c >= CLI_OPT_ROW) {
            opt_take(&spec->opts[c - CLI_OPT_ROW], optarg);
        } else if (c == 'h') {
            fputs(spec->usage, stdout);
            exit(0);
        } else if (c == 'V') {
            ld_cli_version();
            exit(0);
        } else {
            opt_refuse(c, argv);
        }
    }
    if (argc - optind > spec->operands)
        ld_cli_bad("unexpected argument '%s'", argv[optind + spec->operands]);
    return optind;
}
