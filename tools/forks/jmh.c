/* jmh.c: a study scored and written as JMH writes its results (forks.h).
 *
 * score is the mean over all measured iterations of all forks; scoreError is
 * t(0.9995, n - 1) * stddev / sqrt(n), JMH's "99.9%" error (stats.h); scoreConfidence
 * is score -+ scoreError; scorePercentiles are JMH's ten, by its estimate; rawData is
 * one list per fork. Like JMH, an error that n = 1 leaves undefined is "NaN".
 */
#include "forks.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* JMH's percentiles, and their keys as it writes them. */
static const double percentiles[] = {0,    50,    90,     95,      99,
                                     99.9, 99.99, 99.999, 99.9999, 100};
static const char *const percentile_keys[] = {
    "0.0", "50.0", "90.0", "95.0", "99.0", "99.9", "99.99", "99.999", "99.9999", "100.0"};
#define NPCT (sizeof percentiles / sizeof percentiles[0])

/* What JMH reports of one metric's samples. */
typedef struct score {
    double mean, error;
    double pct[NPCT];
} score;

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static score score_of(const double *raw, size_t n)
{
    score sc = {0};
    ld_summary sum = ld_summarize(raw, n);
    sc.mean = sum.mean;
    sc.error = n < 2 ? NAN : sum.half_width;
    double *sorted = malloc(n * sizeof *sorted);
    for (size_t i = 0; i < NPCT; i++)
        sc.pct[i] = NAN;
    if (!sorted)
        return sc;
    memcpy(sorted, raw, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, ascending);
    for (size_t i = 0; i < NPCT; i++)
        sc.pct[i] = ld_percentile_jmh(sorted, n, percentiles[i]);
    free(sorted);
    return sc;
}

/* A JSON number, exact to the last bit; JMH writes what is not finite as "NaN". */
static void number(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("\"NaN\"", out);
}

/* A JSON string, escaped. */
static void string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* One metric's object: score, error, confidence, percentiles, unit, raw data. */
static void write_metric(FILE *out, const ld_study *s, const ld_metric *m,
                         const char *indent)
{
    size_t its = s->iterations, n = (size_t)s->forks * its;
    score sc = score_of(m->raw, n);
    fprintf(out, "{\n%s    \"score\": ", indent);
    number(out, sc.mean);
    fprintf(out, ",\n%s    \"scoreError\": ", indent);
    number(out, sc.error);
    fprintf(out, ",\n%s    \"scoreConfidence\": [", indent);
    number(out, sc.mean - sc.error);
    fputs(", ", out);
    number(out, sc.mean + sc.error);
    fprintf(out, "],\n%s    \"scorePercentiles\": {", indent);
    for (size_t i = 0; i < NPCT; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", percentile_keys[i]);
        number(out, sc.pct[i]);
    }
    fprintf(out, "},\n%s    \"scoreUnit\": ", indent);
    string(out, m->unit);
    fprintf(out, ",\n%s    \"rawData\": [", indent);
    for (unsigned f = 0; f < s->forks; f++) {
        fputs(f ? ", [" : "[", out);
        for (size_t i = 0; i < its; i++) {
            if (i)
                fputs(", ", out);
            number(out, m->raw[f * its + i]);
        }
        fputc(']', out);
    }
    fprintf(out, "]\n%s}", indent);
}

/* The method's fields, as JMH names them; an iteration is one operation. */
static void write_method(FILE *out, const ld_study *s, const ld_bench *b)
{
    fputs("        \"benchmark\": ", out);
    char name[3 * LD_FORKS_NAME_MAX];
    snprintf(name, sizeof name, "loomdist.%s.%s", b->job, b->strategy);
    string(out, name);
    fprintf(out,
            ",\n        \"mode\": \"thrpt\",\n        \"threads\": %d,\n"
            "        \"forks\": %u,\n        \"warmupIterations\": %u,\n"
            "        \"warmupTime\": \"1 op\",\n        \"warmupBatchSize\": 1,\n"
            "        \"measurementIterations\": %u,\n"
            "        \"measurementTime\": \"1 op\",\n"
            "        \"measurementBatchSize\": 1,\n",
            s->ranks, s->forks, s->warmup, s->iterations);
}

/* params: every value a string, as JMH writes them. */
static void write_params(FILE *out, const ld_bench *b)
{
    fputs("        \"params\": {", out);
    for (size_t i = 0; i < b->nparams; i++) {
        fputs(i ? ", " : "", out);
        string(out, b->params[i].name);
        fputs(": ", out);
        string(out, b->params[i].value);
    }
    fputs("},\n", out);
}

/* pids: one list per fork, a process id per rank; not JMH's, which ignores it. */
static void write_pids(FILE *out, const ld_study *s)
{
    fputs("        \"pids\": [", out);
    for (unsigned f = 0; f < s->forks; f++) {
        fputs(f ? ", [" : "[", out);
        for (int r = 0; r < s->ranks; r++)
            fprintf(out, "%s%lld", r ? ", " : "",
                    (long long)s->pids[(size_t)f * (size_t)s->ranks + (size_t)r]);
        fputc(']', out);
    }
    fputs("]\n", out);
}

static void write_bench(FILE *out, const ld_study *s, const ld_bench *b)
{
    fputs("    {\n", out);
    write_method(out, s, b);
    write_params(out, b);
    fputs("        \"primaryMetric\": ", out);
    write_metric(out, s, &b->metrics[0], "        ");
    fputs(",\n        \"secondaryMetrics\": {", out);
    for (size_t m = 1; m < b->nmetrics; m++) {
        fputs(m > 1 ? ",\n            " : "\n            ", out);
        string(out, b->metrics[m].name);
        fputs(": ", out);
        write_metric(out, s, &b->metrics[m], "            ");
    }
    fputs(b->nmetrics > 1 ? "\n        },\n" : "},\n", out);
    write_pids(out, s);
    fputs("    }", out);
}

void ld_jmh_write_json(const ld_study *s, FILE *out)
{
    fputs("[\n", out);
    for (size_t i = 0; i < s->nbench; i++) {
        fputs(i ? ",\n" : "", out);
        write_bench(out, s, &s->bench[i]);
    }
    fputs("\n]\n", out);
}

void ld_jmh_print_summary(const ld_study *s, FILE *out)
{
    size_t n = (size_t)s->forks * s->iterations, width = 9;
    for (size_t i = 0; i < s->nbench; i++) {
        size_t w = strlen(s->bench[i].job) + strlen(s->bench[i].strategy) + 10;
        width = w > width ? w : width;
    }
    fprintf(out, "%-*s  Mode  Cnt %12s   %10s  Units\n", (int)width, "Benchmark", "Score",
            "Error");
    for (size_t i = 0; i < s->nbench; i++) {
        const ld_bench *b = &s->bench[i];
        char name[3 * LD_FORKS_NAME_MAX];
        snprintf(name, sizeof name, "loomdist.%s.%s", b->job, b->strategy);
        score sc = score_of(b->metrics[0].raw, n);
        fprintf(out, "%-*s thrpt %4zu %12.3f ± %10.3f  %s\n", (int)width, name, n,
                sc.mean, sc.error, b->metrics[0].unit);
    }
}
