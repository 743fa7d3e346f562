/* fuzz_cli.h: a helper program's command line, fed in process to the parser its
 * main.c keeps static. A harness includes this header, then lib/cli/cli.c and
 * lib/cli/cli_opts.c where the program uses them, and the program's main.c, so that:
 * - exit() returns to the harness with its status (longjmp), as the parser's --help
 *   and every bad-input path end with it;
 * - stdout and stderr are buffers, so that what the parser printed is checked;
 * - the program's own main is renamed away: libFuzzer's, or replay.c's, runs instead.
 * An input is the arguments, separated by NUL bytes (as fuzz_options.c reads them).
 *
 * What every harness holds, through fuzz_cli_run:
 * - a parse ends as a run (the parser returns), help (exit 0, the usage on stdout and
 *   nothing on stderr) or bad input (exit 2, one line on stderr naming the program,
 *   and nothing on stdout); nothing else;
 * - parsing the same command line twice gives the same verdict, the same output and
 *   the same options (each harness compares its own).
 */
#ifndef LD_FUZZ_CLI_H
#define LD_FUZZ_CLI_H

#include <getopt.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CLI_ARGS 32
#define FUZZ_CLI_OUT 8192

enum fuzz_cli_verdict { FUZZ_CLI_RUN = -1 }; /* else the status exit() was given */

/* Abort with the broken property: libFuzzer then saves the input that broke it. */
static void fuzz_cli_require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_cli: %s\n", what);
        abort();
    }
}

static jmp_buf fuzz_cli_jump;

__attribute__((noreturn)) static void fuzz_cli_exit(int status)
{
    longjmp(fuzz_cli_jump, status + 1); /* 0 would mean the first return */
}

/* What one parse printed, on either stream. */
typedef struct fuzz_cli_out {
    char out[FUZZ_CLI_OUT], err[FUZZ_CLI_OUT];
} fuzz_cli_out;

static FILE *fuzz_cli_stdout, *fuzz_cli_stderr;

/* The parser under test writes here: every use in main.c, cli.c and cli_opts.c after
 * this header names these streams (getopt's own messages are off: opterr is 0). */
#undef stdout
#undef stderr
#define stdout fuzz_cli_stdout
#define stderr fuzz_cli_stderr
#define exit(status) fuzz_cli_exit(status)
#define main fuzz_cli_program_main

/* Split the input at NUL bytes into argv[1..], after the program's name; argv ends
 * with NULL, as a real one does. */
static int fuzz_cli_split(char *text, size_t size, const char *program, char **argv)
{
    int argc = 1;
    argv[0] = (char *)program;
    for (size_t at = 0; at < size && argc < FUZZ_CLI_ARGS; argc++) {
        argv[argc] = text + at;
        at += strlen(text + at) + 1;
    }
    argv[argc] = NULL;
    return argc;
}

/* A parser call: parse argv into the options at opts, as main would. */
typedef void (*fuzz_cli_parse)(int argc, char **argv, void *opts);

/* One parse, from a fresh getopt and fresh streams: its verdict and what it printed.
 * The parse gets a copy of argv, since GNU getopt permutes it. */
static int fuzz_cli_once(fuzz_cli_parse parse, int argc, char **argv, char **copy,
                         void *opts, fuzz_cli_out *o)
{
    volatile int verdict = FUZZ_CLI_RUN;

    memcpy(copy, argv, sizeof(char *) * (size_t)(argc + 1));
    memset(o, 0, sizeof *o);
    fuzz_cli_stdout = fmemopen(o->out, sizeof o->out - 1, "w");
    fuzz_cli_stderr = fmemopen(o->err, sizeof o->err - 1, "w");
    fuzz_cli_require(fuzz_cli_stdout && fuzz_cli_stderr, "no memory for the streams");
    optind = 0; /* glibc: start over, and forget the last parse's state */
    int jumped = setjmp(fuzz_cli_jump);
    if (jumped)
        verdict = jumped - 1;
    else
        parse(argc, copy, opts);
    fclose(fuzz_cli_stdout);
    fclose(fuzz_cli_stderr);
    return verdict;
}

/* The verdict's output: help prints the usage (--version its one line), bad input one
 * line on stderr. */
static void fuzz_cli_check_output(int verdict, const fuzz_cli_out *o, const char *program,
                                  const char *bad_ending)
{
    size_t len = strlen(o->err);
    size_t name = strlen(program);

    switch (verdict) {
    case FUZZ_CLI_RUN:
        fuzz_cli_require(o->out[0] == '\0' && o->err[0] == '\0',
                         "a parse that ran printed something");
        break;
    case 0:
        fuzz_cli_require((strncmp(o->out, "Usage: ", 7) == 0 ||
                          (strncmp(o->out, program, name) == 0 && o->out[name] == ' ')) &&
                             o->err[0] == '\0',
                         "help without its usage, or with a message");
        break;
    case 2:
        fuzz_cli_require(o->out[0] == '\0', "a refusal printed on stdout");
        fuzz_cli_require(len > name + 2 && strncmp(o->err, program, name) == 0 &&
                             strncmp(o->err + name, ": ", 2) == 0,
                         "a refusal that does not name the program");
        fuzz_cli_require(strchr(o->err, '\n') == o->err + len - 1,
                         "a refusal not of one line");
        fuzz_cli_require(len >= strlen(bad_ending) &&
                             strcmp(o->err + len - strlen(bad_ending), bad_ending) == 0,
                         "a refusal without its ending");
        break;
    default:
        fuzz_cli_require(0, "an exit status other than 0 and 2");
    }
}

/* Parse the input's command line twice into a and b (each of opts_size bytes, set to
 * the program's defaults by init), check the verdicts and output, and return the
 * verdict; the options, when it is a run, are the harness's to check. The strings
 * they point to last until the next input. */
static int fuzz_cli_run(const uint8_t *data, size_t size, const char *program,
                        const char *bad_ending, fuzz_cli_parse parse,
                        void (*init)(void *opts), void *a, void *b, size_t opts_size)
{
    static fuzz_cli_out oa, ob;
    static char *argv[FUZZ_CLI_ARGS + 1], *copy_a[FUZZ_CLI_ARGS + 1],
        *copy_b[FUZZ_CLI_ARGS + 1];
    static char *text;

    free(text);
    text = malloc(size + 1);
    fuzz_cli_require(text != NULL, "no memory for the input");
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = fuzz_cli_split(text, size, program, argv);
    init(a);
    int va = fuzz_cli_once(parse, argc, argv, copy_a, a, &oa);
    init(b);
    int vb = fuzz_cli_once(parse, argc, argv, copy_b, b, &ob);
    fuzz_cli_check_output(va, &oa, program, bad_ending);
    fuzz_cli_require(va == vb && strcmp(oa.out, ob.out) == 0 &&
                         strcmp(oa.err, ob.err) == 0,
                     "two parses of one command line disagree");
    if (va == FUZZ_CLI_RUN)
        fuzz_cli_require(memcmp(a, b, opts_size) == 0,
                         "two parses gave different options");
    return va;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
