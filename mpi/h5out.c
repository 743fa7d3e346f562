/* h5out.c: collective parallel HDF5 output, one dataset per column. */
#include "h5out.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <uv.h>

#include "cpus.h"

/* Where one rank's rows go in a dataset of `total` rows. */
typedef struct slab {
    hsize_t total, offset, count;
} slab;

typedef struct writer {
    MPI_Comm comm;
    hid_t file;
    hid_t dxpl; /* collective transfers */
    int rank, size;
    int failed;
    char *cols; /* this rank's per-trade columns, one after another (cols_alloc) */
} writer;

/* The columns' buffer is faulted in by their fill, inside the write's time: in huge
 * pages that is one fault per 2 MiB instead of 512, which took a million-row fill on
 * one rank from 21.5 to 12.6 ms. The advice may be refused; it only costs time. */
#define COLS_HUGE_PAGE (2u << 20)

/* Room for every per-trade column of /trades, and then of each strategy in turn,
 * filled in one pass over the rows: a pass per column read the whole book (48 bytes
 * a trade) again for each of its seven fields. 0, or -1. */
static int cols_alloc(writer *w, const ld_run *run, size_t n)
{
    size_t width = LD_H5_TRADE_ROW_BYTES;
    for (size_t i = 0; i < run->n; i++) {
        size_t row = ld_job_row_bytes(run->rec[i].job);
        width = row > width ? row : width;
    }
    size_t bytes = (n ? n : 1) * width;
    void *cols = NULL;
    if (bytes < COLS_HUGE_PAGE)
        cols = malloc(bytes);
    else if (posix_memalign(&cols, COLS_HUGE_PAGE, bytes) == 0)
        madvise(cols, bytes, MADV_HUGEPAGE);
    else
        cols = NULL;
    w->cols = cols;
    return w->cols ? 0 : -1;
}

/* Write a 1-D dataset of `total` rows, this rank's `count` rows at `offset`. Every
 * rank calls it, with count 0 if it has nothing, as collective I/O requires. */
static void attr_string(writer *w, hid_t loc, const char *name, const char *v);

static void write_column(writer *w, hid_t loc, const char *name, hid_t type, slab s,
                         const void *buf, const char *unit)
{
    hsize_t total = s.total;
    hid_t fspace = H5Screate_simple(1, &total, NULL);
    hid_t dset =
        H5Dcreate2(loc, name, type, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t count = s.count;
    hid_t mspace = H5Screate_simple(1, &count, NULL);
    if (s.count)
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &s.offset, NULL, &count, NULL);
    else
        H5Sselect_none(fspace), H5Sselect_none(mspace);
    if (dset < 0 || H5Dwrite(dset, type, mspace, fspace, w->dxpl, buf) < 0)
        w->failed = 1;
    H5Sclose(mspace);
    H5Sclose(fspace);
    if (dset >= 0) {
        attr_string(w, dset, "unit", unit);
        H5Dclose(dset);
    }
}

/* A [rows][ranks] dataset of which this rank writes column `rank`; returns it open,
 * for attributes, or a negative id. */
static hid_t write_per_rank_typed(writer *w, hid_t loc, const char *name, hid_t type,
                                  const void *col, hsize_t rows)
{
    hsize_t dims[2] = {rows, (hsize_t)w->size};
    hid_t fspace = H5Screate_simple(2, dims, NULL);
    hid_t dset =
        H5Dcreate2(loc, name, type, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t start[2] = {0, (hsize_t)w->rank}, count[2] = {rows, 1};
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mspace = H5Screate_simple(2, count, NULL);
    if (dset < 0 || H5Dwrite(dset, type, mspace, fspace, w->dxpl, col) < 0)
        w->failed = 1;
    H5Sclose(mspace);
    H5Sclose(fspace);
    return dset;
}

/* A [rows][ranks] dataset of which this rank writes column `rank`, with its unit. */
static void write_per_rank(writer *w, hid_t loc, const char *name, hid_t type,
                           const void *col, hsize_t rows, const char *unit)
{
    hid_t dset = write_per_rank_typed(w, loc, name, type, col, rows);
    if (dset >= 0) {
        attr_string(w, dset, "unit", unit);
        H5Dclose(dset);
    }
}

static void attr_scalar(writer *w, hid_t loc, const char *name, hid_t type, const void *v)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || H5Awrite(a, type, v) < 0)
        w->failed = 1;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(space);
}

/* A variable-length UTF-8 string, as h5py and NetCDF-4 write them: h5py reads it
 * back as a str. */
static void attr_string(writer *w, hid_t loc, const char *name, const char *v)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    attr_scalar(w, loc, name, type, &v);
    H5Tclose(type);
}

static void attr_i64(writer *w, hid_t loc, const char *name, int64_t v)
{
    attr_scalar(w, loc, name, H5T_NATIVE_INT64, &v);
}

static void attr_i32(writer *w, hid_t loc, const char *name, int v)
{
    attr_scalar(w, loc, name, H5T_NATIVE_INT, &v);
}

const char *ld_h5_version(void)
{
    static char version[32];
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    snprintf(version, sizeof version, "%u.%u.%u", maj, min, rel);
    return version;
}

/* The comma-separated jobs that ran, for the root attribute. */
static void jobs_ran(const ld_run *run, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i < run->n; i++) {
        if (i > 0 && run->rec[i].job == run->rec[i - 1].job)
            continue;
        if (out[0])
            strncat(out, ",", len - strlen(out) - 1);
        strncat(out, run->rec[i].job->name, len - strlen(out) - 1);
    }
}

/* The attribute name of an option: its own, or its name with '-' as '_'. */
static void attr_name(const ld_opt *opt, char *out, size_t len)
{
    snprintf(out, len, "%s", opt->attr ? opt->attr : opt->name);
    for (char *p = out; *p; p++)
        *p = *p == '-' ? '_' : *p;
}

/* One option's value as a root attribute: a count as uint64, a number as double, a
 * choice as its name, a flag as 0 or 1, a text as itself. */
static void attr_option(writer *w, const ld_opt *opt, const void *config)
{
    char name[64];
    attr_name(opt, name, sizeof name);
    const char *at = (const char *)config + opt->offset;
    switch (opt->type) {
    case LD_OPT_COUNT:
        attr_scalar(w, w->file, name, H5T_NATIVE_UINT64, at);
        return;
    case LD_OPT_REAL:
        attr_scalar(w, w->file, name, H5T_NATIVE_DOUBLE, at);
        return;
    case LD_OPT_CHOICE:
        attr_string(w, w->file, name, opt->choices[(int)ld_opt_value(opt, config)]);
        return;
    case LD_OPT_FLAG:
        attr_i32(w, w->file, name, (int)ld_opt_value(opt, config));
        return;
    case LD_OPT_TEXT:
        attr_string(w, w->file, name, at);
        return;
    }
}

/* Whether the comma-separated list holds name. */
static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *at = list; *at;) {
        size_t n = strcspn(at, ",");
        if (n == len && strncmp(at, name, len) == 0)
            return 1;
        at += n + (at[n] == ',');
    }
    return 0;
}

/* Append to list the attribute names of the options in opts that change a result and
 * are not in it yet (jobs may share an option); with config, write each one appended as
 * a root attribute. */
static void result_names(writer *w, const ld_opt *opts, size_t n, const void *config,
                         char *list, size_t len)
{
    char name[64];
    for (size_t k = 0; k < n; k++) {
        if (!(opts[k].flags & LD_OPT_RESULT))
            continue;
        attr_name(&opts[k], name, sizeof name);
        if (listed(list, name))
            continue;
        if (list[0])
            strncat(list, ",", len - strlen(list) - 1);
        strncat(list, name, len - strlen(list) - 1);
        if (config)
            attr_option(w, &opts[k], config);
    }
}

/* Every option that changes a result, the driver's and each selected job's, as a
 * root attribute, once even where jobs share it; `result_options` names them all, for
 * the analysis' experiment key. */
static void write_result_options(writer *w, const ld_options *o)
{
    char list[1024] = "";
    size_t n;
    const ld_opt *common = ld_options_common(&n);
    result_names(w, common, n, o, list, sizeof list);
    for (size_t j = 0; j < ld_njobs; j++)
        if (o->selected[j])
            result_names(w, ld_jobs[j]->opts, ld_jobs[j]->nopts, o->job_config[j], list,
                         sizeof list);
    attr_string(w, w->file, "result_options", list);
}

/* A job's group names the options its results depend on: the driver's and its own,
 * so its results compare with another file's that ran other jobs beside it. */
static void write_job_options(writer *w, hid_t group, const ld_job *job)
{
    char list[1024] = "";
    size_t n;
    const ld_opt *common = ld_options_common(&n);
    result_names(w, common, n, NULL, list, sizeof list);
    result_names(w, job->opts, job->nopts, NULL, list, sizeof list);
    attr_string(w, group, "result_options", list);
}

/* The instruction-set flags that change how fast a kernel may run: a run's figures
 * are only comparable with runs that had the same. */
static const char *const cpu_flags_kept[] = {
    "sse2",     "sse4_2",   "avx",      "avx2",  "fma", "avx512f",
    "avx512dq", "avx512bw", "avx512vl", "asimd", "sve", NULL};

/* Whether the space-separated list `list` has the word w. */
static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return 1;
    return 0;
}

/* This CPU's model name and its kept flags, from /proc/cpuinfo ("" where it says
 * nothing, as off Linux). */
static void cpu_identity(char *model, size_t mlen, char *flags, size_t flen)
{
    model[0] = flags[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        const char *v = colon + 1 + (colon[1] == ' ');
        if (!model[0] && strncmp(line, "model name", 10) == 0)
            snprintf(model, mlen, "%.*s", (int)strcspn(v, "\n"), v);
        if (!flags[0] &&
            (strncmp(line, "flags", 5) == 0 || strncmp(line, "Features", 8) == 0))
            for (size_t k = 0; cpu_flags_kept[k]; k++)
                if (has_word(v, cpu_flags_kept[k]))
                    snprintf(flags + strlen(flags), flen - strlen(flags), "%s%s",
                             flags[0] ? "," : "", cpu_flags_kept[k]);
    }
    if (f)
        fclose(f);
}

/* Rank 0's CPU model and flags, as root attributes every rank writes alike. */
static void write_cpu_attrs(writer *w)
{
    char model[256], flags[256];
    cpu_identity(model, sizeof model, flags, sizeof flags);
    MPI_Bcast(model, sizeof model, MPI_CHAR, 0, w->comm);
    MPI_Bcast(flags, sizeof flags, MPI_CHAR, 0, w->comm);
    attr_string(w, w->file, "cpu_model", model);
    attr_string(w, w->file, "cpu_flags", flags);
}

static void write_root_attrs(writer *w, const ld_h5_context *c)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING], jobs[256];
    int len;
    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, "\n,")] = '\0';
    jobs_ran(c->run, jobs, sizeof jobs);
    const char *job_id = getenv("SLURM_JOB_ID");
    hid_t root = w->file;
    attr_i32(w, root, "schema_version", LD_SCHEMA_VERSION);
    attr_string(w, root, "software_version", LD_VERSION);
    attr_string(w, root, "git_commit", LD_GIT_COMMIT);
    attr_string(w, root, "date", c->date);
    attr_string(w, root, "command_line", c->command_line);
    attr_string(w, root, "mpi_version", mpi);
    attr_string(w, root, "hdf5_version", ld_h5_version());
    attr_string(w, root, "libuv_version", uv_version_string());
    attr_string(w, root, "hwloc_version", ld_cpus_hwloc_version());
    write_result_options(w, c->o);
    attr_i32(w, root, "ranks", w->size);
    attr_i32(w, root, "nodes", c->node->nodes);
    attr_i32(w, root, "ranks_per_node", c->node->ranks_per_node);
    attr_i32(w, root, "warmup", (int)c->o->warmup);
    attr_i32(w, root, "iterations", (int)c->o->iterations);
    attr_string(w, root, "slurm_job_id", job_id ? job_id : "");
    attr_string(w, root, "jobs", jobs);
    write_cpu_attrs(w);
}

/* /ranks: one row per rank, each rank writing its own. */
static void write_ranks(writer *w, const ld_h5_context *c)
{
    hid_t g = H5Gcreate2(w->file, "ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    slab s = {.total = (hsize_t)w->size, .offset = (hsize_t)w->rank, .count = 1};
    hid_t name = H5Tcopy(H5T_C_S1);
    H5Tset_size(name, LD_NODE_NAME_MAX);
    H5Tset_strpad(name, H5T_STR_NULLPAD);
    char padded[LD_NODE_NAME_MAX] = {0};
    memcpy(padded, c->node->name, strnlen(c->node->name, LD_NODE_NAME_MAX - 1));
    write_column(w, g, "node_name", name, s, padded, "");
    H5Tclose(name);
    int cpus = (int)c->node->cpus.n, first = c->node->cpus.n ? c->node->cpus.id[0] : -1;
    uint64_t trades = c->share->n;
    uint8_t over = (uint8_t)c->node->oversubscribed;
    /* The rank's process: runs repeated in fresh processes can show they were. */
    int64_t pid = (int64_t)getpid();
    write_column(w, g, "local_rank", H5T_NATIVE_INT, s, &c->node->local_rank, "");
    write_column(w, g, "pid", H5T_NATIVE_INT64, s, &pid, "");
    write_column(w, g, "cpus", H5T_NATIVE_INT, s, &cpus, "CPUs");
    write_column(w, g, "first_cpu", H5T_NATIVE_INT, s, &first, "");
    write_column(w, g, "trades", H5T_NATIVE_UINT64, s, &trades, "trades");
    write_column(w, g, "oversubscribed", H5T_NATIVE_UINT8, s, &over, "");
    H5Gclose(g);
}

/* /trades, its columns filled in one pass over the book. What a trade's fields give
 * exactly is not written: the notional is price_cents * quantity (book.h), and the
 * rank that held a row follows from /ranks/trades, as rows are in rank order. */
static void write_trades(writer *w, const ld_h5_context *c, slab s)
{
    size_t n = c->share->n;
    const ld_trade *t = c->share->trades;
    uint64_t *id = (uint64_t *)w->cols;
    int64_t *price = (int64_t *)(id + n);
    char *symbol = (char *)(price + n);
    uint32_t *quantity = (uint32_t *)(symbol + n * LD_SYMBOL_LEN), *cpty = quantity + n;
    uint8_t *side = (uint8_t *)(cpty + n);
    for (size_t i = 0; i < n; i++) {
        id[i] = t[i].id;
        price[i] = t[i].price_cents;
        memcpy(symbol + i * LD_SYMBOL_LEN, t[i].symbol, LD_SYMBOL_LEN);
        quantity[i] = t[i].quantity;
        cpty[i] = t[i].counterparty;
        side[i] = t[i].side;
    }
    hid_t g = H5Gcreate2(w->file, "trades", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sym = H5Tcopy(H5T_C_S1); /* fixed-length, NUL-padded */
    H5Tset_size(sym, LD_SYMBOL_LEN);
    H5Tset_strpad(sym, H5T_STR_NULLPAD);
    write_column(w, g, "id", H5T_NATIVE_UINT64, s, id, "");
    write_column(w, g, "side", H5T_NATIVE_UINT8, s, side, "");
    write_column(w, g, "quantity", H5T_NATIVE_UINT32, s, quantity, "shares");
    write_column(w, g, "price_cents", H5T_NATIVE_INT64, s, price, "cents");
    write_column(w, g, "counterparty", H5T_NATIVE_UINT32, s, cpty, "");
    write_column(w, g, "symbol", sym, s, symbol, "");
    H5Tclose(sym);
    H5Gclose(g);
}

/* The HDF5 type of a column type. */
static hid_t col_type(enum ld_col_type t)
{
    switch (t) {
    case LD_COL_I64:
        return H5T_NATIVE_INT64;
    case LD_COL_F64:
        return H5T_NATIVE_DOUBLE;
    case LD_COL_U8:
        return H5T_NATIVE_UINT8;
    case LD_COL_I8:
        break;
    }
    return H5T_NATIVE_INT8;
}

/* Results rows a block of which stays in cache while each column takes its part. */
#define FILL_ROWS 4096

/* Rows lo..hi of one column of 8 or 1 bytes, taken from results of `size` bytes each:
 * a copy of a constant size is a move, where one of a variable size called memcpy
 * for every value (2.2 ms a strategy for 250,000 rows, against 0.7 ms). */
static void fill_column(char *to, const char *from, size_t bytes, size_t size, size_t lo,
                        size_t hi)
{
    if (bytes == 8)
        for (size_t i = lo; i < hi; i++)
            memcpy(to + i * 8, from + i * size, 8);
    else
        for (size_t i = lo; i < hi; i++)
            to[i] = from[i * size];
}

/* The per-trade columns the job declares, in /trades row order, one after another in
 * w->cols, filled a block of rows at a time so that the results are read once. */
static void write_results(writer *w, hid_t g, const ld_record *r, slab s)
{
    size_t n = (size_t)s.count, size = r->job->result_size, ncols = r->job->ncolumns;
    const ld_column *col = r->job->columns;
    for (size_t lo = 0; lo < n; lo += FILL_ROWS) {
        size_t hi = n - lo > FILL_ROWS ? lo + FILL_ROWS : n;
        char *at = w->cols;
        for (size_t k = 0; k < ncols; k++) {
            size_t bytes = ld_col_bytes(col[k].type);
            fill_column(at, (const char *)r->results + col[k].offset, bytes, size, lo,
                        hi);
            at += n * bytes;
        }
    }
    char *at = w->cols;
    for (size_t k = 0; k < ncols; k++) {
        write_column(w, g, col[k].name, col_type(col[k].type), s, at, col[k].unit);
        at += n * ld_col_bytes(col[k].type);
    }
}

/* The [iterations][ranks] metric datasets of one strategy, then the percentiles of
 * each percentile column, named p50_<unit>, p99_<unit> and max_<unit>. */
static int write_metrics(writer *w, hid_t g, const ld_record *r)
{
    static const char *const pct_names[LD_PCTS] = {"p50", "p99", "max"};
    hsize_t rows = r->iterations;
    int64_t *col = malloc((rows ? rows : 1) * sizeof *col);
    if (!col)
        return -1;
    for (size_t k = 0; k < LD_METRICS_N; k++) {
        for (hsize_t it = 0; it < rows; it++)
            col[it] = ld_metrics_get(&r->metrics[it], k);
        write_per_rank(w, g, ld_metrics_fields[k].name, H5T_NATIVE_INT64, col, rows,
                       ld_metrics_fields[k].unit);
    }
    for (size_t c = 0; c < r->npct; c++) {
        const ld_column *pc = ld_job_column(r->job, LD_COL_PERCENTILES, c);
        for (int k = 0; k < LD_PCTS; k++) {
            char name[64];
            snprintf(name, sizeof name, "%s_%s", pct_names[k], pc->unit);
            for (hsize_t it = 0; it < rows; it++)
                col[it] = ld_record_pct(r, (unsigned)it, c)[k];
            write_per_rank(w, g, name, H5T_NATIVE_INT64, col, rows, pc->unit);
        }
    }
    free(col);
    return 0;
}

/* A strategy's named figures: one [iterations][ranks] float64 dataset each, named as
 * the figure, with its unit as the attribute `unit`. Every rank reports the same names
 * in the same order, as the collective creates need. */
static int write_figures(writer *w, hid_t g, const ld_record *r)
{
    hsize_t rows = r->iterations;
    if (rows == 0 || r->figures[0].n == 0)
        return 0;
    double *col = malloc(rows * sizeof *col);
    if (!col)
        return -1;
    for (size_t k = 0; k < r->figures[0].n; k++) {
        const ld_figure *f = &r->figures[0].v[k];
        for (hsize_t it = 0; it < rows; it++)
            col[it] = k < r->figures[it].n ? r->figures[it].v[k].value : 0.0;
        write_per_rank(w, g, f->name, H5T_NATIVE_DOUBLE, col, rows, f->unit);
    }
    free(col);
    return 0;
}

/* /<job>/<strategy>: attributes, per-trade results, per-iteration metrics. */
static int write_strategy(writer *w, const ld_options *o, const ld_record *r, slab s)
{
    int fresh = H5Lexists(w->file, r->job->name, H5P_DEFAULT) <= 0;
    hid_t job =
        fresh ? H5Gcreate2(w->file, r->job->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
              : H5Gopen2(w->file, r->job->name, H5P_DEFAULT);
    if (job >= 0 && fresh)
        write_job_options(w, job, r->job);
    hid_t g = H5Gcreate2(job, r->strategy->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (job < 0 || g < 0)
        return -1;
    attr_string(w, g, "job", r->job->name);
    attr_string(w, g, "strategy", r->strategy->name);
    uint64_t tasks = s.total;
    attr_scalar(w, g, "tasks", H5T_NATIVE_UINT64, &tasks);
    attr_i32(w, g, "threads", (int)r->threads);
    attr_i32(w, g, "iteration_kept", (int)r->iterations - 1);
    if (ld_job_reports(r->job, LD_REPORT_BOUND))
        attr_i64(w, g, r->job->bound_attr, ld_record_bound(o, r));
    write_results(w, g, r, s);
    int rc = write_metrics(w, g, r) | write_figures(w, g, r);
    H5Gclose(g);
    H5Gclose(job);
    return rc;
}

/* /ranks/phase_ns, [phases][ranks] as the per-iteration datasets, its phase names in
 * the attribute `phases`: rank 0 adds it to the closed file alone, so that it holds
 * the write's own time. Returns 0 or -1; the reopening itself is not timed. */
static int write_phases(const char *path, const int64_t *all, int ranks)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (file < 0)
        return -1;
    writer w = {.file = file};
    hsize_t dims[2] = {LD_PHASES, (hsize_t)ranks};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "ranks/phase_ns", H5T_NATIVE_INT64, space, H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT);
    if (dset < 0 ||
        H5Dwrite(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) < 0)
        w.failed = 1;
    if (dset >= 0) {
        char names[256] = "";
        for (int k = 0; k < LD_PHASES; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     k ? "," : "", ld_phase_names[k]);
        attr_string(&w, dset, "unit", "ns");
        attr_string(&w, dset, "phases", names);
        H5Dclose(dset);
    }
    H5Sclose(space);
    return H5Fclose(file) < 0 || w.failed ? -1 : 0;
}

/* End the write phase and gather every rank's phases, [phase][rank], on rank 0, which
 * adds them to the file. Returns ok on every rank. */
static int record_phases(MPI_Comm comm, const char *path, ld_phases *ph, int rank,
                         int size)
{
    ld_phases_end(ph, LD_PHASE_WRITE);
    int64_t *all = rank == 0 ? malloc((size_t)size * LD_PHASES * sizeof *all) : NULL;
    int64_t *t = rank == 0 ? malloc((size_t)size * LD_PHASES * sizeof *t) : NULL;
    MPI_Gather(ph->ns, LD_PHASES, MPI_INT64_T, t, LD_PHASES, MPI_INT64_T, 0, comm);
    int ok = 1;
    if (rank == 0) {
        ok = all && t;
        for (int r = 0; ok && r < size; r++)
            for (int k = 0; k < LD_PHASES; k++)
                all[(size_t)k * (size_t)size + (size_t)r] = t[(size_t)r * LD_PHASES + k];
        ok = ok && write_phases(path, all, size) == 0;
    }
    free(all);
    free(t);
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    return ok;
}

void ld_h5_temp_name(const char *output, char *out, size_t len)
{
    snprintf(out, len, "%s.tmp", output);
}

/* Open the file for parallel access with MPI-IO; the error stack printer is off,
 * since the caller reports one clear line instead of a trace from every rank. */
static hid_t create_file(MPI_Comm comm, const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    return file;
}

static int write_all(writer *w, const ld_h5_context *c, slab s)
{
    write_root_attrs(w, c);
    write_ranks(w, c);
    write_trades(w, c, s);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->run->n; i++)
        rc = write_strategy(w, c->o, &c->run->rec[i], s);
    return rc || w->failed ? -1 : 0;
}

int ld_h5_write(MPI_Comm comm, const ld_h5_context *c)
{
    char tmp[LD_OUTPUT_MAX + 8];
    ld_h5_temp_name(c->o->output, tmp, sizeof tmp);
    writer w = {.comm = comm, .failed = 0};
    MPI_Comm_rank(comm, &w.rank);
    MPI_Comm_size(comm, &w.size);
    slab s = {.total = c->o->trades, .offset = c->share->offset, .count = c->share->n};
    int have_cols = cols_alloc(&w, c->run, c->share->n) == 0;
    w.file = create_file(comm, tmp);
    int ok = w.file >= 0 && have_cols;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (ok) {
        w.dxpl = H5Pcreate(H5P_DATASET_XFER);
        H5Pset_dxpl_mpio(w.dxpl, H5FD_MPIO_COLLECTIVE);
        ok = write_all(&w, c, s) == 0;
        H5Pclose(w.dxpl);
        ok &= H5Fclose(w.file) >= 0;
    }
    free(w.cols);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (ok)
        ok = record_phases(comm, tmp, c->phases, w.rank, w.size);
    if (w.rank == 0) {
        if (ok && rename(tmp, c->o->output) != 0)
            ok = 0;
        if (!ok) {
            fprintf(stderr,
                    "loomdist: could not write %s (HDF5 write or rename failed; "
                    "is the disk full?); no results file was left\n",
                    c->o->output);
            remove(tmp);
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    return ok ? 0 : -1;
}
