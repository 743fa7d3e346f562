/* study.c: the forks' HDF5 files read into one study (forks.h). */
#include "forks.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

/* The datasets of [iterations, ranks] a strategy's group holds, kept as metrics. */
typedef struct walk {
    ld_bench *b;
    hid_t group;
    const ld_study *s;
    int failed;
} walk;

/* A string attribute of loc, or "" when it has none. */
static void read_string_attr(hid_t loc, const char *name, char *out, size_t len)
{
    out[0] = '\0';
    if (H5Aexists(loc, name) <= 0)
        return;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t stored = a >= 0 ? H5Aget_type(a) : -1;
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    /* HDF5 converts no character set into another: read it in its own */
    if (stored >= 0) {
        H5Tset_cset(type, H5Tget_cset(stored));
        H5Tclose(stored);
    }
    char *v = NULL;
    if (a >= 0 && H5Tis_variable_str(type) > 0 && H5Aread(a, type, &v) >= 0 && v) {
        snprintf(out, len, "%s", v);
        H5free_memory(v);
    }
    H5Tclose(type);
    if (a >= 0)
        H5Aclose(a);
}

/* A root attribute's value as text: an integer, a number or a string. */
static void attr_text(hid_t file, const char *name, char *out, size_t len)
{
    hid_t a = H5Aopen(file, name, H5P_DEFAULT);
    hid_t type = a >= 0 ? H5Aget_type(a) : -1;
    H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
    out[0] = '\0';
    if (cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_NONE) {
        unsigned long long v = 0;
        if (H5Aread(a, H5T_NATIVE_ULLONG, &v) >= 0)
            snprintf(out, len, "%llu", v);
    } else if (cls == H5T_INTEGER) {
        long long v = 0;
        if (H5Aread(a, H5T_NATIVE_LLONG, &v) >= 0)
            snprintf(out, len, "%lld", v);
    } else if (cls == H5T_FLOAT) {
        double v = 0;
        if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0)
            snprintf(out, len, "%g", v);
    }
    if (type >= 0)
        H5Tclose(type);
    if (a >= 0)
        H5Aclose(a);
    if (cls == H5T_STRING)
        read_string_attr(file, name, out, len);
}

/* The params of b: its strategy as `model`, then each option its job's results
 * depend on, as the job's group lists them. */
static void read_params(hid_t file, hid_t job, ld_bench *b)
{
    char list[4096];
    read_string_attr(job, "result_options", list, sizeof list);
    b->nparams = 1;
    snprintf(b->params[0].name, LD_FORKS_NAME_MAX, "model");
    snprintf(b->params[0].value, LD_FORKS_NAME_MAX, "%s", b->strategy);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save);
         name && b->nparams < LD_FORKS_PARAMS_MAX; name = strtok_r(NULL, ",", &save)) {
        if (H5Aexists(file, name) <= 0)
            continue;
        ld_param *p = &b->params[b->nparams++];
        snprintf(p->name, sizeof p->name, "%s", name);
        attr_text(file, name, p->value, sizeof p->value);
    }
}

/* A dataset's shape, when it is [iterations, ranks]: its rank count, else 0. */
static int series_ranks(hid_t dset, unsigned iterations)
{
    hid_t space = H5Dget_space(dset);
    hsize_t dims[2] = {0, 0};
    int nd = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    if (nd == 2)
        H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0)
        H5Sclose(space);
    return nd == 2 && dims[0] == iterations ? (int)dims[1] : 0;
}

/* One metric named in b found in its group: metrics[0] for wall_ns, else appended. */
static herr_t add_metric(hid_t group, const char *name, const H5L_info_t *info, void *ctx)
{
    (void)info;
    walk *w = ctx;
    hid_t d = H5Dopen2(group, name, H5P_DEFAULT);
    if (d < 0)
        return 0;
    int is_series = series_ranks(d, w->s->iterations) > 0;
    int primary = strcmp(name, "wall_ns") == 0;
    if (is_series) {
        ld_metric *m = &w->b->metrics[primary ? 0 : w->b->nmetrics++];
        snprintf(m->name, sizeof m->name, "%s", primary ? "ops" : name);
        if (primary)
            snprintf(m->unit, sizeof m->unit, "ops/s");
        else
            read_string_attr(d, "unit", m->unit, sizeof m->unit);
        m->raw = calloc((size_t)w->s->forks * w->s->iterations, sizeof *m->raw);
        w->failed |= m->raw == NULL;
    }
    H5Dclose(d);
    return 0;
}

/* The benchmark of group job/strategy, its metrics still to read. */
static int open_bench(const ld_study *s, hid_t file, hid_t job, const char *jobname,
                      const char *strategy, ld_bench *b)
{
    *b = (ld_bench){0};
    snprintf(b->job, sizeof b->job, "%s", jobname);
    snprintf(b->strategy, sizeof b->strategy, "%s", strategy);
    read_params(file, job, b);
    hid_t g = H5Gopen2(job, strategy, H5P_DEFAULT);
    H5G_info_t gi;
    if (g < 0 || H5Gget_info(g, &gi) < 0)
        return -1;
    b->metrics = calloc(gi.nlinks + 1, sizeof *b->metrics);
    b->nmetrics = 1;
    walk w = {.b = b, .group = g, .s = s};
    if (b->metrics)
        H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, add_metric, &w);
    H5Gclose(g);
    return b->metrics && !w.failed && b->metrics[0].raw ? 0 : -1;
}

/* Each strategy group of one job, appended to s->bench. */
static herr_t add_strategy(hid_t job, const char *name, const H5L_info_t *info, void *ctx)
{
    (void)info;
    void **args = ctx;
    ld_study *s = args[0];
    hid_t file = *(hid_t *)args[1];
    const char *jobname = args[2];
    H5O_info_t oi;
    if (H5Oget_info_by_name(job, name, &oi, H5P_DEFAULT) < 0 || oi.type != H5O_TYPE_GROUP)
        return 0;
    ld_bench *grown = realloc(s->bench, (s->nbench + 1) * sizeof *grown);
    if (!grown)
        return -1;
    s->bench = grown;
    if (open_bench(s, file, job, jobname, name, &s->bench[s->nbench]) != 0)
        return -1;
    s->nbench++;
    return 0;
}

/* The benchmarks of the first fork's file: every strategy of every job that ran. */
static int discover(ld_study *s, hid_t file)
{
    char jobs[1024];
    read_string_attr(file, "jobs", jobs, sizeof jobs);
    char *save = NULL;
    for (char *j = strtok_r(jobs, ",", &save); j; j = strtok_r(NULL, ",", &save)) {
        hid_t g = H5Gopen2(file, j, H5P_DEFAULT);
        if (g < 0)
            return -1;
        void *args[] = {s, &file, j};
        herr_t rc = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, add_strategy, args);
        H5Gclose(g);
        if (rc < 0)
            return -1;
    }
    return s->nbench ? 0 : -1;
}

/* The values of one dataset, [iterations, ranks], into fork k's row of m: the
 * primary as operations per second of the slowest rank, the others their largest. */
static int read_metric(const ld_study *s, hid_t group, unsigned k, ld_metric *m,
                       int primary)
{
    hid_t d = H5Dopen2(group, primary ? "wall_ns" : m->name, H5P_DEFAULT);
    size_t r = (size_t)s->ranks, its = s->iterations;
    double *v = malloc(its * r * sizeof *v);
    int ok = d >= 0 && v && series_ranks(d, s->iterations) == s->ranks &&
             H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    for (size_t i = 0; ok && i < its; i++) {
        double most = v[i * r];
        for (size_t j = 1; j < r; j++)
            most = v[i * r + j] > most ? v[i * r + j] : most;
        m->raw[k * its + i] = primary ? 1e9 / most : most;
    }
    free(v);
    if (d >= 0)
        H5Dclose(d);
    return ok ? 0 : -1;
}

/* Every metric of every benchmark, fork k's row. */
static int read_values(ld_study *s, hid_t file, unsigned k, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->nbench; i++) {
        ld_bench *b = &s->bench[i];
        char path[2 * LD_FORKS_NAME_MAX + 2];
        snprintf(path, sizeof path, "%s/%s", b->job, b->strategy);
        hid_t g = H5Gopen2(file, path, H5P_DEFAULT);
        int rc = g < 0 ? -1 : 0;
        for (size_t m = 0; rc == 0 && m < b->nmetrics; m++)
            rc = read_metric(s, g, k, &b->metrics[m], m == 0);
        if (g >= 0)
            H5Gclose(g);
        if (rc != 0) {
            snprintf(err, errlen, "fork %u's file has no %s like the first fork's", k + 1,
                     path);
            return -1;
        }
    }
    return 0;
}

/* /ranks/pid: the ranks of fork 0 fix the count; each fork's pids go in its row. */
static int read_pids(ld_study *s, hid_t file, unsigned k)
{
    hid_t d = H5Dopen2(file, "ranks/pid", H5P_DEFAULT);
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t n = 0;
    if (space >= 0 && H5Sget_simple_extent_ndims(space) == 1)
        H5Sget_simple_extent_dims(space, &n, NULL);
    int ok = n > 0 && (k > 0 || s->ranks == 0);
    if (ok && k == 0) {
        s->ranks = (int)n;
        s->pids = calloc((size_t)s->forks * n, sizeof *s->pids);
    }
    ok = ok && s->pids && n == (hsize_t)s->ranks &&
         H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                 s->pids + (size_t)k * n) >= 0;
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    return ok ? 0 : -1;
}

/* Root attributes fork and forks: which fork of how many wrote the file. */
static void mark_fork(hid_t file, unsigned k, unsigned forks)
{
    const char *names[] = {"fork", "forks"};
    int values[] = {(int)k + 1, (int)forks};
    for (int i = 0; i < 2; i++) {
        if (H5Aexists(file, names[i]) > 0)
            H5Adelete(file, names[i]);
        hid_t space = H5Screate(H5S_SCALAR);
        hid_t a =
            H5Acreate2(file, names[i], H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0) {
            H5Awrite(a, H5T_NATIVE_INT, &values[i]);
            H5Aclose(a);
        }
        H5Sclose(space);
    }
}

int ld_study_read_fork(ld_study *s, unsigned k, const char *path, char *err,
                       size_t errlen)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (file < 0) {
        snprintf(err, errlen, "cannot open fork %u's file %s", k + 1, path);
        return -1;
    }
    mark_fork(file, k, s->forks);
    int rc = read_pids(s, file, k);
    if (rc != 0)
        snprintf(err, errlen, "fork %u's file %s has no /ranks/pid like the first's",
                 k + 1, path);
    if (rc == 0 && k == 0 && (rc = discover(s, file)) != 0)
        snprintf(err, errlen, "%s holds no job's strategies with %u iterations", path,
                 s->iterations);
    if (rc == 0)
        rc = read_values(s, file, k, err, errlen);
    H5Fclose(file);
    return rc;
}

void ld_study_free(ld_study *s)
{
    for (size_t i = 0; i < s->nbench; i++) {
        for (size_t m = 0; m < s->bench[i].nmetrics; m++)
            free(s->bench[i].metrics[m].raw);
        free(s->bench[i].metrics);
    }
    free(s->bench);
    free(s->pids);
    *s = (ld_study){0};
}
