/* fuzz_options.c: arbitrary command lines into the option parser and the config it
 * gives the jobs. An input is its arguments separated by NUL bytes.
 *
 * What must hold for every input, or the harness aborts:
 * - the parse ends in one of its four verdicts, and parsing twice gives the same
 *   verdict, message and options (every rank must agree with no communication);
 * - a refusal comes with a message of one line that fits its buffer;
 * - options accepted for a run are within their documented ranges, select something
 *   to run, and turn into a job config that says the same.
 *
 * Built with clang as a libFuzzer target; the replay driver (replay.c) runs the same
 * function over the checked-in corpus in any build.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpus.h"
#include "options.h"

#define FUZZ_ARGS_MAX 32

/* Abort with the broken property: libFuzzer then saves the input that broke it. */
static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_options: %s\n", what);
        abort();
    }
}

/* Split the input at NUL bytes into argv[1..], with argv[0] the program's name. The
 * last argument ends at the input's end, so no byte is ever read past it. */
static int split_args(char *text, size_t size, char **argv)
{
    int argc = 1;
    argv[0] = "loomdist";
    for (size_t at = 0; at < size && argc < FUZZ_ARGS_MAX; argc++) {
        argv[argc] = text + at;
        at += strlen(text + at) + 1;
    }
    return argc;
}

/* A message is one line, shorter than its buffer. */
static void check_message(const char *err, size_t len)
{
    size_t n = strnlen(err, len);
    require(n > 0 && n < len, "a refusal with no message, or one past its buffer");
    require(strchr(err, '\n') == NULL, "a message of more than one line");
}

static int any_selected(const ld_options *o)
{
    for (size_t j = 0; j < ld_njobs; j++) {
        require(o->selected[j] >> ld_jobs[j]->nstrategies == 0,
                "a strategy selected past its job's table");
        if (o->selected[j])
            return 1;
    }
    return 0;
}

/* Every declared option, the driver's and each job's, within the range --help
 * documents. */
static void check_ranges(const ld_opt *opts, size_t n, const void *config)
{
    for (size_t k = 0; k < n; k++) {
        double v = ld_opt_value(&opts[k], config);
        size_t choices = 0, text;
        switch (opts[k].type) {
        case LD_OPT_COUNT:
        case LD_OPT_REAL: /* a default outside the range means "not set": 0 carriers */
            require(isfinite(v) &&
                        (v == opts[k].def || (v >= opts[k].min && v <= opts[k].max)),
                    "an option out of its range");
            break;
        case LD_OPT_CHOICE:
            while (opts[k].choices[choices])
                choices++;
            require(v >= 0 && v < (double)choices, "a choice out of its list");
            break;
        case LD_OPT_FLAG:
            require(v == 0 || v == 1, "a flag neither 0 nor 1");
            break;
        case LD_OPT_TEXT:
            text = strnlen((const char *)config + opts[k].offset, LD_OPT_TEXT_MAX);
            require(text > 0 && text < LD_OPT_TEXT_MAX, "a text empty or unterminated");
            break;
        }
    }
}

/* The ranges --help documents, and the config that follows from them. */
static void check_run(const ld_options *o)
{
    size_t n;
    const ld_opt *common = ld_options_common(&n);
    check_ranges(common, n, o);
    for (size_t j = 0; j < ld_njobs; j++)
        check_ranges(ld_jobs[j]->opts, ld_jobs[j]->nopts, o->job_config[j]);
    require(o->output[0] != '\0' && strnlen(o->output, LD_OUTPUT_MAX) < LD_OUTPUT_MAX,
            "--output empty or unterminated");
    require(any_selected(o), "a run with nothing selected");
    static const ld_cpus cpus = {.n = 1, .id = {0}};
    for (size_t j = 0; j < ld_njobs; j++) {
        ld_job_config cfg;
        ld_options_job_config(o, j, &cpus, &cfg);
        require(cfg.stack_size == (size_t)o->stack_kib * 1024, "the stack size changed");
        require(cfg.slow_factor >= 1, "a slow factor below 1");
        require(cfg.opts == o->job_config[j], "a job handed another's config");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char *argv[FUZZ_ARGS_MAX + 1] = {0};
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = split_args(text, size, argv);
    ld_options a, b;
    char err_a[512] = "", err_b[512] = "";
    enum ld_options_verdict va = ld_options_parse(&a, argc, argv, err_a, sizeof err_a);
    enum ld_options_verdict vb = ld_options_parse(&b, argc, argv, err_b, sizeof err_b);
    require(va == LD_OPTIONS_RUN || va == LD_OPTIONS_HELP || va == LD_OPTIONS_VERSION ||
                va == LD_OPTIONS_SCHEMA || va == LD_OPTIONS_INVALID,
            "a verdict outside the five");
    require(va == vb && strcmp(err_a, err_b) == 0, "two parses of one input disagree");
    if (va == LD_OPTIONS_INVALID)
        check_message(err_a, sizeof err_a);
    if (va == LD_OPTIONS_RUN) {
        require(memcmp(&a, &b, sizeof a) == 0, "two parses gave different options");
        check_run(&a);
    }
    free(text);
    return 0;
}
