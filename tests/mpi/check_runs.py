"""Check loomdist HDF5 files against each other: every trade once per file, and each
trade's settle status and VaR identical, bit for bit, across every strategy and file.

Usage: check_runs.py FILE.h5 [FILE.h5 ...]   (exit 1 with one line per failure)
"""
import sys

import h5py
import numpy as np

ROOT_ATTRS = ["schema_version", "software_version", "git_commit", "date", "command_line",
              "mpi_version", "hdf5_version", "libuv_version", "hwloc_version", "seed",
              "trades", "sims", "ranks", "nodes", "ranks_per_node", "latency_scale",
              "partition", "stack_mode", "stack_kib", "warmup", "iterations", "slurm_job_id",
              "jobs"]
METRICS = ["wall_ns", "peak_threads", "peak_rss_kib", "utime_us", "stime_us", "nvcsw",
           "nivcsw"]

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg, file=sys.stderr)


def by_id(f, column):
    """A per-trade column reordered by trade id, so files with different rank counts
    compare row for row."""
    order = np.argsort(f["trades/id"][...], kind="stable")
    return column[...][order]


def check_file(path):
    """The invariants of one file; returns {(job, strategy): {column: by-id array}}."""
    f = h5py.File(path, "r")
    for a in ROOT_ATTRS:
        if a not in f.attrs:
            fail(f"{path}: root attribute {a} missing")
    n = int(f.attrs["trades"])
    ranks = int(f.attrs["ranks"])
    ids = np.sort(f["trades/id"][...])
    if not np.array_equal(ids, np.arange(n, dtype=ids.dtype)):
        fail(f"{path}: /trades/id is not every trade exactly once")
    if f["ranks/node_name"].shape != (ranks,):
        fail(f"{path}: /ranks/node_name has {f['ranks/node_name'].shape}, not ({ranks},)")
    if int(np.sum(f["ranks/trades"][...])) != n:
        fail(f"{path}: /ranks/trades does not add up to {n}")
    out = {}
    iters = int(f.attrs["iterations"])
    for job in ("settle", "var"):
        if job not in f:
            continue
        for strategy, g in f[job].items():
            for m in METRICS:
                if g[m].shape != (iters, ranks):
                    fail(f"{path}: {job}/{strategy}/{m} has shape {g[m].shape}")
            if np.any(g["wall_ns"][...] <= 0):
                fail(f"{path}: {job}/{strategy} has a non-positive wall time")
            cols = ["status", "failed_check"] if job == "settle" else ["var"]
            out[(job, strategy)] = {c: by_id(f, g[c]) for c in cols}
            if job == "settle" and np.any(g["latency_ns"][...] <= 0):
                fail(f"{path}: settle/{strategy} has a trade with no latency")
    return out


def check_identical(results):
    """Every strategy in every file agrees with the first one seen, bit for bit."""
    reference = {}
    for path, per_strategy in results:
        for (job, strategy), cols in per_strategy.items():
            for col, values in cols.items():
                raw = values.view(np.uint64) if values.dtype == np.float64 else values
                if col not in reference:
                    reference[col] = (f"{path}:{job}/{strategy}", raw)
                    continue
                where, ref = reference[col]
                if ref.shape != raw.shape or not np.array_equal(ref, raw):
                    bad = int(np.sum(ref != raw)) if ref.shape == raw.shape else -1
                    fail(f"{col} of {path}:{job}/{strategy} differs from {where} "
                         f"({bad} trades)")
    return reference


def main(paths):
    results = [(p, check_file(p)) for p in paths]
    reference = check_identical(results)
    if "status" in reference:
        failed = int(np.sum(reference["status"][1] != 0))
        print(f"settle: statuses agree across {len(paths)} files ({failed} failed checks)")
    if "var" in reference:
        print(f"var: VaR bit-identical across {len(paths)} files")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
