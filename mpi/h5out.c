/* h5out.c: collective parallel HDF5 output, one dataset per column. */
#include "h5out.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cpus.h"

/* Where one rank's rows go in a dataset of `total` rows. */
typedef struct slab {
    hsize_t total, offset, count;
} slab;

typedef struct writer {
    hid_t file;
    hid_t dxpl; /* collective transfers */
    int rank, size;
    int failed;
} writer;

/* Write a 1-D dataset of `total` rows, this rank's `count` rows at `offset`. Every
 * rank calls it, with count 0 if it has nothing, as collective I/O requires. */
static void write_column(writer *w, hid_t loc, const char *name, hid_t type, slab s,
                         const void *buf)
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
    if (dset >= 0)
        H5Dclose(dset);
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

/* A [rows][ranks] int64 dataset of which this rank writes column `rank`. */
static void write_per_rank(writer *w, hid_t loc, const char *name, const int64_t *col,
                           hsize_t rows)
{
    hid_t dset = write_per_rank_typed(w, loc, name, H5T_NATIVE_INT64, col, rows);
    if (dset >= 0)
        H5Dclose(dset);
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

static void attr_string(writer *w, hid_t loc, const char *name, const char *v)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, strlen(v) + 1);
    H5Tset_strpad(type, H5T_STR_NULLTERM);
    attr_scalar(w, loc, name, type, v);
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
    attr_scalar(w, root, "seed", H5T_NATIVE_UINT64, &c->o->seed);
    attr_scalar(w, root, "trades", H5T_NATIVE_UINT64, &c->o->trades);
    attr_scalar(w, root, "sims", H5T_NATIVE_UINT32, &c->o->sims);
    attr_i32(w, root, "ranks", w->size);
    attr_i32(w, root, "nodes", c->node->nodes);
    attr_i32(w, root, "ranks_per_node", c->node->ranks_per_node);
    attr_scalar(w, root, "latency_scale", H5T_NATIVE_DOUBLE, &c->o->latency_scale);
    attr_string(w, root, "partition",
                c->o->partition == LD_PARTITION_BLOCK ? "block" : "cyclic");
    attr_string(w, root, "stack_mode",
                c->o->stack_mode == LD_STACK_COPY ? "copy" : "own");
    attr_i32(w, root, "stack_kib", (int)c->o->stack_kib);
    attr_i32(w, root, "warmup", (int)c->o->warmup);
    attr_i32(w, root, "iterations", (int)c->o->iterations);
    attr_string(w, root, "slurm_job_id", job_id ? job_id : "");
    attr_string(w, root, "jobs", jobs);
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
    write_column(w, g, "node_name", name, s, padded);
    H5Tclose(name);
    int cpus = (int)c->node->cpus.n, first = c->node->cpus.n ? c->node->cpus.id[0] : -1;
    uint64_t trades = c->share->n;
    uint8_t over = (uint8_t)c->node->oversubscribed;
    write_column(w, g, "local_rank", H5T_NATIVE_INT, s, &c->node->local_rank);
    write_column(w, g, "cpus", H5T_NATIVE_INT, s, &cpus);
    write_column(w, g, "first_cpu", H5T_NATIVE_INT, s, &first);
    write_column(w, g, "trades", H5T_NATIVE_UINT64, s, &trades);
    write_column(w, g, "oversubscribed", H5T_NATIVE_UINT8, s, &over);
    H5Gclose(g);
}

/* Copy one field out of an array of structs into a column buffer. */
#define GATHER(dst, src, n, field)                                                       \
    for (size_t i_ = 0; i_ < (n); i_++)                                                  \
    (dst)[i_] = (src)[i_].field

static int write_trades(writer *w, const ld_h5_context *c, slab s)
{
    size_t n = c->share->n;
    const ld_trade *t = c->share->trades;
    void *buf = malloc((n ? n : 1) * sizeof(int64_t));
    if (!buf)
        return -1;
    hid_t g = H5Gcreate2(w->file, "trades", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    uint64_t *u64 = buf;
    int64_t *i64 = buf;
    uint32_t *u32 = buf;
    uint8_t *u8 = buf;
    int32_t *i32 = buf;
    GATHER(u64, t, n, id);
    write_column(w, g, "id", H5T_NATIVE_UINT64, s, u64);
    GATHER(u8, t, n, side);
    write_column(w, g, "side", H5T_NATIVE_UINT8, s, u8);
    GATHER(u32, t, n, quantity);
    write_column(w, g, "quantity", H5T_NATIVE_UINT32, s, u32);
    GATHER(i64, t, n, price_cents);
    write_column(w, g, "price_cents", H5T_NATIVE_INT64, s, i64);
    GATHER(i64, t, n, notional_cents);
    write_column(w, g, "notional_cents", H5T_NATIVE_INT64, s, i64);
    GATHER(u32, t, n, counterparty);
    write_column(w, g, "counterparty", H5T_NATIVE_UINT32, s, u32);
    for (size_t i = 0; i < n; i++)
        i32[i] = w->rank;
    write_column(w, g, "rank", H5T_NATIVE_INT32, s, i32);
    H5Gclose(g);
    free(buf);
    return 0;
}

/* The per-trade columns a job fills, in /trades row order. */
static int write_results(writer *w, hid_t g, const ld_record *r, slab s)
{
    size_t n = (size_t)s.count;
    void *buf = malloc((n ? n : 1) * sizeof(int64_t));
    if (!buf)
        return -1;
    if (r->job->fields & LD_FIELDS_SETTLE) {
        uint8_t *u8 = buf;
        int8_t *i8 = buf;
        int64_t *i64 = buf;
        GATHER(u8, r->results, n, status);
        write_column(w, g, "status", H5T_NATIVE_UINT8, s, u8);
        GATHER(i8, r->results, n, failed_check);
        write_column(w, g, "failed_check", H5T_NATIVE_INT8, s, i8);
        GATHER(i64, r->results, n, latency_ns);
        write_column(w, g, "latency_ns", H5T_NATIVE_INT64, s, i64);
    }
    if (r->job->fields & LD_FIELDS_VAR) {
        double *d = buf;
        GATHER(d, r->results, n, var);
        write_column(w, g, "var", H5T_NATIVE_DOUBLE, s, d);
    }
    free(buf);
    return 0;
}

/* The [iterations][ranks] metric datasets of one strategy. */
static int write_metrics(writer *w, hid_t g, const ld_record *r)
{
    static const char *const names[] = {"wall_ns",  "peak_threads", "peak_rss_kib",
                                        "utime_us", "stime_us",     "nvcsw",
                                        "nivcsw"};
    static const char *const pct_names[LD_PCTS] = {"p50_ns", "p99_ns", "max_ns"};
    hsize_t rows = r->iterations;
    int64_t *col = malloc((rows ? rows : 1) * sizeof *col);
    if (!col)
        return -1;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        for (hsize_t it = 0; it < rows; it++)
            col[it] = ((const int64_t *)&r->metrics[it])[k];
        write_per_rank(w, g, names[k], col, rows);
    }
    for (int k = 0; (r->job->fields & LD_FIELDS_SETTLE) && k < LD_PCTS; k++) {
        for (hsize_t it = 0; it < rows; it++)
            col[it] = r->pct[it][k];
        write_per_rank(w, g, pct_names[k], col, rows);
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
        hid_t dset = write_per_rank_typed(w, g, f->name, H5T_NATIVE_DOUBLE, col, rows);
        if (dset >= 0) {
            attr_string(w, dset, "unit", f->unit);
            H5Dclose(dset);
        }
    }
    free(col);
    return 0;
}

/* /<job>/<strategy>: attributes, per-trade results, per-iteration metrics. */
static int write_strategy(writer *w, const ld_record *r, slab s)
{
    hid_t job =
        H5Lexists(w->file, r->job->name, H5P_DEFAULT) > 0
            ? H5Gopen2(w->file, r->job->name, H5P_DEFAULT)
            : H5Gcreate2(w->file, r->job->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g = H5Gcreate2(job, r->strategy->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (job < 0 || g < 0)
        return -1;
    attr_string(w, g, "job", r->job->name);
    attr_string(w, g, "strategy", r->strategy->name);
    uint64_t tasks = s.total;
    attr_scalar(w, g, "tasks", H5T_NATIVE_UINT64, &tasks);
    attr_i32(w, g, "threads", (int)r->threads);
    if (r->job->fields & LD_FIELDS_SETTLE)
        attr_i64(w, g, "critical_path_ns", r->bound_ns);
    int rc = write_results(w, g, r, s) | write_metrics(w, g, r) | write_figures(w, g, r);
    H5Gclose(g);
    H5Gclose(job);
    return rc;
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
    int rc = write_trades(w, c, s);
    for (size_t i = 0; rc == 0 && i < c->run->n; i++)
        rc = write_strategy(w, &c->run->rec[i], s);
    return rc || w->failed ? -1 : 0;
}

int ld_h5_write(MPI_Comm comm, const ld_h5_context *c)
{
    char tmp[LD_OUTPUT_MAX + 8];
    ld_h5_temp_name(c->o->output, tmp, sizeof tmp);
    writer w = {.failed = 0};
    MPI_Comm_rank(comm, &w.rank);
    MPI_Comm_size(comm, &w.size);
    slab s = {.total = c->o->trades, .offset = c->share->offset, .count = c->share->n};
    w.file = create_file(comm, tmp);
    int ok = w.file >= 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
    if (ok) {
        w.dxpl = H5Pcreate(H5P_DATASET_XFER);
        H5Pset_dxpl_mpio(w.dxpl, H5FD_MPIO_COLLECTIVE);
        ok = write_all(&w, c, s) == 0;
        H5Pclose(w.dxpl);
        ok &= H5Fclose(w.file) >= 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm);
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
