"""Finding and reading loomdist HDF5 files (schema version 1) into plain records.

A folder from a Slurm sweep can hold a crashed run, a file from another version or a
stray file. Each such file is turned into one line saying what is wrong with it, so the
report is still made from the rest, and no bad input ends in a traceback.
"""
import os
from dataclasses import dataclass, field

import h5py
import numpy as np

SCHEMA_VERSION = 1
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
HDF5_SUFFIXES = (".h5", ".hdf5")
ROOT_ATTRS = ("seed", "trades", "sims", "ranks", "nodes", "latency_scale", "jobs")
PER_RANK = ("wall_ns", "peak_threads", "peak_rss_kib", "utime_us", "stime_us",
            "nvcsw", "nivcsw")
# Errors h5py and numpy raise on a damaged or inconsistent file.
READ_ERRORS = (OSError, KeyError, ValueError, TypeError, IndexError, RuntimeError)


class InputError(Exception):
    """A file that cannot be used; the message is one line for the report."""


class SchemaRefused(InputError):
    """A file written to another schema: refused, not merely unreadable."""


@dataclass
class Strategy:
    """One /<job>/<strategy> group: per-iteration, per-rank metrics and per-trade results."""
    job: str
    name: str
    tasks: int
    threads: int
    critical_path_ns: int
    per_rank: dict          # metric name -> int64 array [iteration, rank]
    status: np.ndarray      # settle: 0 settled, 1 failed; None for other jobs
    latency_ns: np.ndarray  # settle: per trade; None for other jobs


@dataclass
class Run:
    """One loomdist output file: its root attributes, its ranks and its strategies."""
    path: str
    seed: int
    trades: int
    sims: int
    latency_scale: float
    stack_mode: str  # "copy" or "own": how green threads kept their stacks
    ranks: int
    nodes: int
    iterations: int
    date: str
    slurm_job_id: str
    jobs_listed: list
    node_names: list
    cpus: np.ndarray
    first_cpu: np.ndarray
    strategies: dict = field(default_factory=dict)  # (job, strategy) -> Strategy

    @property
    def experiment_key(self):
        """Runs are one experiment only when they settle and value the same book the
        same way, with green threads that keep their stacks the same way; anything else
        must never be pooled."""
        return (self.seed, self.trades, self.sims, self.latency_scale, self.stack_mode)

    @property
    def cores(self):
        """Distinct CPUs the ranks own, counted per node, so that oversubscribed ranks
        sharing CPUs do not count them twice."""
        owned = set()
        for rank, (name, first, count) in enumerate(zip(self.node_names, self.first_cpu,
                                                        self.cpus)):
            if first < 0:  # where a rank's CPUs sit is unknown: count them as its own
                owned.update((name, rank, i) for i in range(int(count)))
            else:
                owned.update((name, cpu) for cpu in range(int(first), int(first + count)))
        return len(owned)

    @property
    def cpus_per_rank(self):
        """The fewest CPUs any rank owns: the bound on one rank's parallel speedup."""
        return max(1, int(self.cpus.min()))

    def jobs(self):
        """The jobs whose groups the file holds, in the order they ran."""
        return sorted({job for job, _ in self.strategies}, key=self._job_order)

    def _job_order(self, job):
        """Position of a job in the jobs attribute; unlisted ones go last."""
        return self.jobs_listed.index(job) if job in self.jobs_listed else len(self.jobs_listed)


def _text(value):
    """HDF5 strings arrive as bytes or str depending on how they were written."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    return str(value)


def find_files(paths):
    """Expand the command-line paths: a folder is searched recursively for *.h5 and
    *.hdf5 (a run still being written is *.h5.tmp* and is left alone); a file named
    directly is taken whatever its name. Returns the files and one line per path that
    gave nothing."""
    files, problems = [], []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(os.path.join(root, name)
                           for root, _, names in os.walk(path) for name in names
                           if name.endswith(HDF5_SUFFIXES))
            if not found:
                problems.append(f"{path}: folder holds no .h5 or .hdf5 file")
            files.extend(found)
        elif os.path.isfile(path):
            files.append(path)
        else:
            problems.append(f"{path}: no such file or folder")
    unique = {}
    for path in files:  # a file named directly and found in its folder is read once
        unique.setdefault(os.path.realpath(path), path)
    return list(unique.values()), problems


def _check_signature(path):
    """Tell a file that was never HDF5 from one that is damaged: both fail to open, but
    the user fixes them differently."""
    with open(path, "rb") as handle:
        head = handle.read(len(HDF5_SIGNATURE))
    if head != HDF5_SIGNATURE:
        raise InputError("not an HDF5 file (no HDF5 signature)")


def _check_schema(f):
    """Refuse other schema versions outright: reading them as version 1 would give wrong
    numbers without any error."""
    if "schema_version" not in f.attrs:
        raise SchemaRefused("no schema_version attribute: not a loomdist file")
    version = int(f.attrs["schema_version"])
    if version != SCHEMA_VERSION:
        raise SchemaRefused(f"schema_version {version}, this analysis reads version "
                         f"{SCHEMA_VERSION}")
    missing = [name for name in ROOT_ATTRS if name not in f.attrs]
    if missing:
        raise InputError(f"root attributes missing: {', '.join(missing)}")


def _read_strategy(group, job, name, ranks, trades):
    """Read one strategy group, checking shapes against the root attributes so that a
    damaged group is refused instead of skewing a table."""
    per_rank = {}
    for metric in PER_RANK:
        if metric not in group:
            raise InputError(f"{job}/{name} has no {metric} dataset")
        data = np.asarray(group[metric][...], dtype=np.int64)
        if data.ndim != 2 or data.shape[1] != ranks or data.shape[0] < 1:
            raise InputError(f"{job}/{name}/{metric} has shape {data.shape}, "
                             f"expected [iterations, {ranks}]")
        per_rank[metric] = data
    if (per_rank["wall_ns"] <= 0).any():
        raise InputError(f"{job}/{name}/wall_ns holds times that are not positive")

    def per_trade(dataset, dtype):
        """A per-trade dataset, or None where the job has none."""
        if dataset not in group:
            return None
        values = np.asarray(group[dataset][...], dtype=dtype)
        if values.shape != (trades,):
            raise InputError(f"{job}/{name}/{dataset} has {values.size} rows, "
                             f"expected {trades}")
        return values

    attrs = group.attrs
    return Strategy(job=job, name=name, tasks=int(attrs.get("tasks", trades)),
                    threads=int(attrs.get("threads", 0)),
                    critical_path_ns=int(attrs.get("critical_path_ns", 0)),
                    per_rank=per_rank, status=per_trade("status", np.uint8),
                    latency_ns=per_trade("latency_ns", np.int64))


def _read_ranks(f, ranks):
    """The /ranks table: node names and the CPUs each rank owns."""
    if "ranks" not in f:
        raise InputError("no /ranks group")
    group = f["ranks"]
    missing = [d for d in ("node_name", "cpus") if d not in group]
    if missing:
        raise InputError(f"/ranks has no {' or '.join(missing)} dataset")
    names = [_text(n) for n in group["node_name"][...]]
    cpus = np.asarray(group["cpus"][...], dtype=np.int64)
    first = (np.asarray(group["first_cpu"][...], dtype=np.int64) if "first_cpu" in group
             else np.full(ranks, -1, dtype=np.int64))
    if len(names) != ranks or cpus.shape != (ranks,):
        raise InputError(f"/ranks has {len(names)} rows, expected {ranks}")
    return names, cpus, first


def _read_run(path, f, notes):
    """Build a Run from an open, schema-checked file. A job the file lists but lacks is
    noted, and the jobs it has are still used."""
    attrs = f.attrs
    ranks, trades = int(attrs["ranks"]), int(attrs["trades"])
    names, cpus, first = _read_ranks(f, ranks)
    listed = [job for job in _text(attrs["jobs"]).split(",") if job]
    run = Run(path=path, seed=int(attrs["seed"]), trades=trades, sims=int(attrs["sims"]),
              latency_scale=float(attrs["latency_scale"]),
              stack_mode=_text(attrs.get("stack_mode", "own")), ranks=ranks,
              nodes=int(attrs["nodes"]), iterations=int(attrs.get("iterations", 0)),
              date=_text(attrs.get("date", "")),
              slurm_job_id=_text(attrs.get("slurm_job_id", "")), jobs_listed=listed,
              node_names=names, cpus=cpus, first_cpu=first)
    for job in listed:
        if job not in f or not isinstance(f[job], h5py.Group) or not len(f[job]):
            notes.append(f"{path}: job {job} is listed in the jobs attribute but its "
                         f"group is missing; the file's other jobs are used")
            continue
        for name, group in f[job].items():
            if not isinstance(group, h5py.Group):
                continue
            try:
                run.strategies[(job, name)] = _read_strategy(group, job, name, ranks, trades)
            except InputError as err:
                notes.append(f"{path}: {err}; that strategy is left out")
    if not run.strategies:
        raise InputError("holds no usable job group")
    return run


def load_run(path, notes):
    """Read one file, raising InputError with a one-line reason when it cannot be used.
    Lesser problems (a missing job or strategy) are appended to notes."""
    _check_signature(path)
    try:
        with h5py.File(path, "r") as f:
            _check_schema(f)
            return _read_run(path, f, notes)
    except InputError:
        raise
    except READ_ERRORS as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"truncated or corrupt HDF5 file ({reason})") from None


def load_all(paths):
    """Read every file under paths. Returns the usable runs and one line per problem,
    each naming its file."""
    files, problems = find_files(paths)
    runs = []
    for path in files:
        try:
            runs.append(load_run(path, problems))
        except SchemaRefused as err:
            problems.append(f"{path}: refused: {err}")
        except InputError as err:
            problems.append(f"{path}: skipped: {err}")
        except OSError as err:
            problems.append(f"{path}: skipped: cannot read ({err.strerror or err})")
    return runs, problems
