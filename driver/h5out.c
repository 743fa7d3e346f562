/* h5out.c: collective parallel HDF5 output, one dataset per column. */
#include "h5out.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <uv.h>

#include "cpus.h"
#include "metrics.h"

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
    char *cols; /* this rank's per-trade columns, one after another, and the scratch
                   of the small datasets rank 0 writes alone (cols_alloc) */
} writer;

/* One rank's row of /ranks, gathered to rank 0 as bytes: every rank runs the same
 * binary. */
typedef struct rank_row {
    char node_name[LD_NODE_NAME_MAX];
    int64_t pid;
    uint64_t trades;
    int local_rank, cpus, first_cpu;
    uint8_t oversubscribed;
} rank_row;

/* One [iterations][ranks] dataset of a strategy: its name, its type of 8 bytes, its
 * unit. */
typedef struct per_iteration {
    char name[64];
    hid_t type;
    const char *unit;
} per_iteration;

/* How many [iterations][ranks] datasets a strategy has: its metrics, the p50, p99 and
 * max of each percentile column, and its named figures. */
static size_t per_iteration_count(const ld_record *r)
{
    size_t figures = r->iterations ? r->figures[0].n : 0;
    return LD_METRICS_N + r->npct * LD_PCTS + figures;
}

/* The scratch a strategy's per-iteration datasets need: their descriptions, this
 * rank's values, every rank's on rank 0, and one dataset transposed. */
static size_t per_iteration_bytes(const ld_record *r, int ranks)
{
    size_t n = per_iteration_count(r), rows = r->iterations;
    return n * sizeof(per_iteration) +
           sizeof(uint64_t) * rows * (n + n * (size_t)ranks + (size_t)ranks);
}

/* The columns' buffer is faulted in by their fill, inside the write's time: in huge
 * pages that is one fault per 2 MiB instead of 512, which took a million-row fill on
 * one rank from 21.5 to 12.6 ms. The advice may be refused; it only costs time. */
#define COLS_HUGE_PAGE (2u << 20)

/* Room for every per-trade column of /trades, and then of each strategy in turn,
 * filled in one pass over the rows: a pass per column read the whole book (40 bytes
 * a trade) again for each of its seven fields. The same room is the scratch of the
 * small datasets, so that a failure to allocate is agreed on once: w->cols is NULL
 * where there was no room. */
static void cols_alloc(writer *w, const ld_run *run, size_t n)
{
    size_t width = LD_H5_TRADE_ROW_BYTES;
    size_t bytes = (size_t)w->size * (sizeof(rank_row) + LD_NODE_NAME_MAX);
    for (size_t i = 0; i < run->n; i++) {
        size_t row = ld_job_row_bytes(run->rec[i].job);
        size_t small = per_iteration_bytes(&run->rec[i], w->size);
        width = row > width ? row : width;
        bytes = small > bytes ? small : bytes;
    }
    bytes = n * width > bytes ? n * width : bytes;
    void *cols = NULL;
    if (bytes < COLS_HUGE_PAGE)
        cols = malloc(bytes);
    else if (posix_memalign(&cols, COLS_HUGE_PAGE, bytes) == 0)
        madvise(cols, bytes, MADV_HUGEPAGE);
    else
        cols = NULL;
    w->cols = cols;
}

static void attr_string(writer *w, hid_t loc, const char *name, const char *v);

/* A dataset written: its unit as the attribute `unit`, then closed (if it was made). */
static void close_with_unit(writer *w, hid_t dset, const char *unit)
{
    if (dset >= 0) {
        attr_string(w, dset, "unit", unit);
        H5Dclose(dset);
    }
}

/* Write a 1-D dataset of `total` rows, this rank's `count` rows at `offset`. Every
 * rank calls it, with count 0 if it has nothing, as collective I/O requires. */
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
    close_with_unit(w, dset, unit);
}

/* A dataset every rank creates, as metadata calls must be collective, and rank 0
 * writes whole from buf, alone: a small dataset's collective write cost a meeting of
 * every rank for a few bytes each. */
static void write_whole(writer *w, hid_t loc, const char *name, hid_t type, int ndims,
                        const hsize_t *dims, const void *buf, const char *unit)
{
    hid_t space = H5Screate_simple(ndims, dims, NULL);
    hid_t dset =
        H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (dset < 0 ||
        (w->rank == 0 && H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0))
        w->failed = 1;
    H5Sclose(space);
    close_with_unit(w, dset, unit);
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
    attr_string(w, root, "cpu_model", c->cpu->model);
    attr_string(w, root, "cpu_flags", c->cpu->flags);
}

/* One field of every rank's row, gathered on rank 0, as the dataset /ranks/<name>;
 * rank 0 lays the field's values out in a column after the rows. */
static void write_rank_field(writer *w, hid_t g, const char *name, hid_t type,
                             const rank_row *rows, size_t offset, size_t bytes,
                             const char *unit)
{
    char *col = (char *)(rows + w->size);
    for (int r = 0; w->rank == 0 && r < w->size; r++)
        memcpy(col + (size_t)r * bytes, (const char *)&rows[r] + offset, bytes);
    hsize_t ranks = (hsize_t)w->size;
    write_whole(w, g, name, type, 1, &ranks, col, unit);
}

#define WRITE_RANK_FIELD(w, g, type, rows, field, unit)                                  \
    write_rank_field(w, g, #field, type, rows, offsetof(rank_row, field),                \
                     sizeof((rows)->field), unit)

/* /ranks: one row per rank, gathered on rank 0 in one call and written there. */
static void write_ranks(writer *w, const ld_h5_context *c)
{
    rank_row mine = {.pid = (int64_t)getpid(), /* runs in fresh processes show it */
                     .trades = c->share->n,
                     .local_rank = c->node->local_rank,
                     .cpus = (int)c->node->cpus.n,
                     .first_cpu = c->node->cpus.n ? c->node->cpus.id[0] : -1,
                     .oversubscribed = (uint8_t)c->node->oversubscribed};
    memcpy(mine.node_name, c->node->name, strnlen(c->node->name, LD_NODE_NAME_MAX - 1));
    rank_row *rows = (rank_row *)(void *)w->cols;
    MPI_Gather(&mine, sizeof mine, MPI_BYTE, rows, sizeof mine, MPI_BYTE, 0, w->comm);
    hid_t g = H5Gcreate2(w->file, "ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t name = H5Tcopy(H5T_C_S1);
    H5Tset_size(name, LD_NODE_NAME_MAX);
    H5Tset_strpad(name, H5T_STR_NULLPAD);
    WRITE_RANK_FIELD(w, g, name, rows, node_name, "");
    H5Tclose(name);
    WRITE_RANK_FIELD(w, g, H5T_NATIVE_INT, rows, local_rank, "");
    WRITE_RANK_FIELD(w, g, H5T_NATIVE_INT64, rows, pid, "");
    WRITE_RANK_FIELD(w, g, H5T_NATIVE_INT, rows, cpus, "CPUs");
    WRITE_RANK_FIELD(w, g, H5T_NATIVE_INT, rows, first_cpu, "");
    WRITE_RANK_FIELD(w, g, H5T_NATIVE_UINT64, rows, trades, "trades");
    WRITE_RANK_FIELD(w, g, H5T_NATIVE_UINT8, rows, oversubscribed, "");
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

/* A strategy's per-iteration datasets, described in d[0..n), and this rank's values
 * of each, v[k * rows + it], 8 bytes a value. */
static void per_iteration_values(const ld_record *r, per_iteration *d, uint64_t *v)
{
    static const char *const pct_names[LD_PCTS] = {"p50", "p99", "max"};
    size_t rows = r->iterations, k = 0;
    for (size_t m = 0; m < LD_METRICS_N; m++, k++) {
        snprintf(d[k].name, sizeof d[k].name, "%s", ld_metrics_fields[m].name);
        d[k].type = H5T_NATIVE_INT64, d[k].unit = ld_metrics_fields[m].unit;
        for (size_t it = 0; it < rows; it++)
            v[k * rows + it] = (uint64_t)ld_metrics_get(&r->metrics[it], m);
    }
    for (size_t c = 0; c < r->npct; c++) {
        const ld_column *pc = ld_job_column(r->job, LD_COL_PERCENTILES, c);
        for (int p = 0; p < LD_PCTS; p++, k++) {
            snprintf(d[k].name, sizeof d[k].name, "%s_%s", pct_names[p], pc->unit);
            d[k].type = H5T_NATIVE_INT64, d[k].unit = pc->unit;
            for (size_t it = 0; it < rows; it++)
                v[k * rows + it] = (uint64_t)ld_record_pct(r, (unsigned)it, c)[p];
        }
    }
    for (size_t f = 0; rows && f < r->figures[0].n; f++, k++) {
        snprintf(d[k].name, sizeof d[k].name, "%s", r->figures[0].v[f].name);
        d[k].type = H5T_NATIVE_DOUBLE, d[k].unit = r->figures[0].v[f].unit;
        for (size_t it = 0; it < rows; it++)
            memcpy(&v[k * rows + it], &r->figures[it].v[f].value, sizeof(double));
    }
}

/* The [iterations][ranks] datasets of one strategy, named as per_iteration_values
 * says: every rank's values gathered on rank 0 in one call, and written there. Every
 * rank has the same names in the same order (run.c put its figures in rank 0's order
 * by name), as the collective creates need. */
static void write_per_iteration(writer *w, hid_t g, const ld_record *r)
{
    size_t n = per_iteration_count(r), rows = r->iterations, ranks = (size_t)w->size;
    per_iteration *d = (per_iteration *)(void *)w->cols;
    uint64_t *mine = (uint64_t *)(d + n), *all = mine + n * rows,
             *ds = all + n * rows * ranks;
    per_iteration_values(r, d, mine);
    MPI_Gather(mine, (int)(n * rows), MPI_UINT64_T, all, (int)(n * rows), MPI_UINT64_T, 0,
               w->comm);
    hsize_t dims[2] = {rows, ranks};
    for (size_t k = 0; k < n; k++) {
        for (size_t rk = 0; w->rank == 0 && rk < ranks; rk++)
            for (size_t it = 0; it < rows; it++)
                ds[it * ranks + rk] = all[(rk * n + k) * rows + it];
        write_whole(w, g, d[k].name, d[k].type, 2, dims, ds, d[k].unit);
    }
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
    write_per_iteration(w, g, r);
    H5Gclose(g);
    H5Gclose(job);
    return 0;
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

int ld_h5_temp_create(const char *tmp)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

/* Rank 0 makes the temporary file (ld_h5_temp_create), then every rank opens it
 * through parallel HDF5: the file, or -1 on every rank; *made says on rank 0 whether
 * the file there is this run's, to remove. */
static hid_t create_temp(MPI_Comm comm, const char *tmp, int rank, int *made)
{
    int ok = 1;
    if (rank == 0)
        ok = *made = ld_h5_temp_create(tmp) == 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    return ok ? create_file(comm, tmp) : -1;
}

int ld_h5_probe(MPI_Comm comm, const char *output, char *err, size_t errlen)
{
    char tmp[LD_OUTPUT_MAX + 8];
    int rank;
    MPI_Comm_rank(comm, &rank);
    ld_h5_temp_name(output, tmp, sizeof tmp);
    int made = 0;
    hid_t file = create_temp(comm, tmp, rank, &made);
    int ok = file >= 0;
    if (ok)
        ok = H5Fclose(file) >= 0;
    /* Every rank has closed it before rank 0 removes it. */
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (rank == 0 && !made) {
        snprintf(err, errlen, "cannot write --output %s: %s appeared during the checks",
                 output, tmp);
    } else if (rank == 0) {
        remove(tmp);
        if (!ok)
            snprintf(err, errlen,
                     "cannot create --output %s through parallel HDF5 and MPI-IO, "
                     "though a plain file can be made there: Open MPI may lack the "
                     "MPI-IO component OMPI_MCA_io names, or the file system the "
                     "fcntl locks MPI-IO takes (NFS without lockd)",
                     output);
    }
    return ok ? 0 : -1;
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
    cols_alloc(&w, c->run, c->share->n);
    int made = 0;
    w.file = create_temp(comm, tmp, w.rank, &made);
    int ok = w.file >= 0 && w.cols;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (ok && w.cols) { /* the room is on every rank where ok is */
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
            if (made)
                remove(tmp);
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    return ok ? 0 : -1;
}
