/* sim_options.c: the skeleton's options, "--name value" each. */
#include "sim_options.h"

#include <stdlib.h>
#include <string.h>

/* A number >= 0 that is the whole of text, into *out. */
static int number(const char *text, double *out)
{
    char *end;
    *out = strtod(text, &end);
    return end != text && *end == '\0' && *out >= 0 ? 0 : -1;
}

/* "--work 12.5,30": one figure per strategy into v; their count into *n. */
static int list(double *v, unsigned *n, const char *text)
{
    char copy[512], *save = NULL;
    snprintf(copy, sizeof copy, "%s", text);
    *n = 0;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == SIM_WORK_MAX || number(t, &v[*n]) != 0)
            return -1;
        (*n)++;
    }
    return *n ? 0 : -1;
}

/* "--partition block|cyclic|ranges", spelled as loomdist spells it. */
static int partition(ld_options *o, const char *value)
{
    static const char *const names[] = {"block", "cyclic", "ranges"};
    for (int k = 0; k < 3; k++)
        if (strcmp(value, names[k]) == 0) {
            o->partition = k;
            return 0;
        }
    return -1;
}

/* One option and its value into s. */
static int set(sim_options *s, const char *name, const char *value)
{
    double v = 0;
    unsigned n;
    if (strcmp(name, "--work") == 0)
        return list(s->work_ns, &s->nwork, value);
    if (strcmp(name, "--fixed") == 0)
        return list(s->fixed_ns, &n, value);
    if (strcmp(name, "--partition") == 0)
        return partition(&s->o, value);
    if (number(value, &v) != 0)
        return -1;
    if (strcmp(name, "--trades") == 0 && v >= 1)
        s->o.trades = (uint64_t)v;
    else if (strcmp(name, "--seed") == 0)
        s->o.seed = (uint64_t)v;
    else if (strcmp(name, "--warmup") == 0)
        s->warmup = (unsigned)v;
    else if (strcmp(name, "--first-warmup") == 0)
        s->first_warmup = (unsigned)v;
    else if (strcmp(name, "--iterations") == 0 && v >= 1)
        s->iterations = (unsigned)v;
    else if (strcmp(name, "--prepare") == 0)
        s->prepare_ns = v;
    else if (strcmp(name, "--pct-columns") == 0)
        s->pct_columns = (unsigned)v;
    else if (strcmp(name, "--copy-ns") == 0)
        s->copy_ns = v;
    else if (strcmp(name, "--gather-ns") == 0)
        s->gather_ns = v;
    else if (strcmp(name, "--ranks-per-node") == 0 && v >= 1)
        s->ranks_per_node = (unsigned)v;
    else if (strcmp(name, "--bytes-per-trade") == 0)
        s->bytes_per_trade = v;
    else if (strcmp(name, "--datasets") == 0 && v >= 1)
        s->datasets = (unsigned)v;
    else if (strcmp(name, "--write-ns-per-byte") == 0)
        s->write_ns_per_byte = v;
    else if (strcmp(name, "--shared-disk") == 0)
        s->shared_disk = v != 0;
    else if (strcmp(name, "--native-slowdown") == 0 && v >= 1)
        s->native_slowdown = v;
    else
        return -1;
    return 0;
}

int sim_options_parse(sim_options *s, int argc, char **argv, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->o.trades = 8000;
    s->o.seed = 42;
    s->iterations = 1;
    s->datasets = 1;
    s->ranks_per_node = 1;
    s->nwork = 1;
    s->native_slowdown = 1;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc || set(s, argv[i], argv[i + 1]) != 0) {
            snprintf(err, errlen, "bad option or value: %s%s%s", argv[i],
                     i + 1 < argc ? " " : "", i + 1 < argc ? argv[i + 1] : "");
            return -1;
        }
    }
    return 0;
}
