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

/* The ranges --help documents, and the config that follows from them. */
static void check_run(const ld_options *o)
{
    require(o->trades >= 1 && o->trades <= 100000000, "--trades out of range");
    require(o->sims >= 1 && o->iterations >= 1, "--sims or --iterations below 1");
    require(o->stack_kib >= 16 && o->stack_kib <= 65536, "--stack-size out of range");
    require(isfinite(o->latency_scale) && o->latency_scale >= 1e-6 &&
                o->latency_scale <= 1000,
            "--latency-scale out of range");
    require(o->fail_rate >= 0 && o->fail_rate <= 1, "--fail-rate out of range");
    require(o->pin_fraction >= 0 && o->pin_fraction <= 1, "--pin-fraction out of range");
    require(o->pool_size >= 1, "--pool-size below 1");
    require(o->output[0] != '\0' && strnlen(o->output, LD_OUTPUT_MAX) < LD_OUTPUT_MAX,
            "--output empty or unterminated");
    require(any_selected(o), "a run with nothing selected");
    static const ld_cpus cpus = {.n = 1, .id = {0}};
    ld_job_config cfg;
    ld_options_job_config(o, &cpus, &cfg);
    require(cfg.stack_size == (size_t)o->stack_kib * 1024, "the stack size changed");
    require(cfg.latency_scale >= o->latency_scale, "the latency scale shrank");
    require(cfg.sims == o->sims && cfg.pool_size == o->pool_size, "a count changed");
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
                va == LD_OPTIONS_INVALID,
            "a verdict outside the four");
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
