"""Finding and reading loomdist HDF5 files (schema version 1) into plain records.

A folder from a Slurm sweep can hold a crashed run, a file from another version or a
stray file. Each such file is turned into one line saying what is wrong with it, so the
report is still made from the rest, and no bad input ends in a traceback.

The reader is generic: it walks the datasets of each /<job>/<strategy> group and sorts
them by shape, 1-D of length `trades` into per-trade columns and 2-D
[iterations, ranks] into per-iteration, per-rank metrics, each with its `unit`. No job's
column names are written here; the tables and findings that interpret a column name it.
"""
import os
from dataclasses import dataclass, field

import h5py
import numpy as np

# The versions read alike: 2 only dropped two /trades columns that the analysis never
# read, as the other columns give them.
SCHEMA_VERSIONS = (1, 2)
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
HDF5_SUFFIXES = (".h5", ".hdf5")
# A job's options (sims, latency_scale, ...) are written only when the job ran, so only
# these are required of every file.
ROOT_ATTRS = ("seed", "trades", "ranks", "nodes", "jobs")
# Every strategy of every job has these: the seed tables' time, threads and memory.
REQUIRED_PER_RANK = ("wall_ns", "peak_threads", "peak_rss_kib")
# Root attributes that change a result, for files written before `result_options`
# listed them; a file's key holds those of them it has.
RESULT_OPTIONS_FALLBACK = ("seed", "trades", "sims", "latency_scale", "stack_mode",
                           "stack_kib", "partition", "var_kernel", "os_threads",
                           "pin_fraction", "fail_rate", "cold_stacks", "carriers", "workers",
                           "micro_max")
# What a file written before the stack attributes ran with: green threads on stacks of
# their own, of the default size.
LEGACY_VALUES = {"stack_mode": "own", "stack_kib": 64}
# The scaling axes: runs that differ only in these are layouts of one experiment.
SCALING_AXES = ("ranks", "nodes", "ranks_per_node")
# Units of files written before each dataset had a `unit` attribute, by name suffix.
LEGACY_UNITS = (("_ns", "ns"), ("_us", "us"), ("_kib", "KiB"), ("_threads", "threads"),
                ("csw", "switches"))
# Errors h5py and numpy raise on a damaged or inconsistent file.
READ_ERRORS = (OSError, KeyError, ValueError, TypeError, IndexError, RuntimeError)


class InputError(Exception):
    """A file that cannot be used; the message is one line for the report."""


class SchemaRefused(InputError):
    """A file written to another schema: refused, not merely unreadable."""


@dataclass
class Strategy:
    """One /<job>/<strategy> group: per-iteration, per-rank metrics, per-trade columns,
    the unit of each, and which measured iteration the per-trade columns come from."""
    job: str
    name: str
    tasks: int
    threads: int
    critical_path_ns: int
    per_rank: dict      # dataset name -> array [iteration, rank]
    per_trade: dict     # dataset name -> array [trade], in the row order of /trades
    units: dict         # dataset name -> unit ("" where neither file nor name says)
    iteration_kept: object = None  # 0-based measured iteration of per_trade; None: unsaid


@dataclass
class Run:
    """One loomdist output file: its root attributes, its ranks and its strategies."""
    path: str
    seed: int
    trades: int
    sims: object           # int, or None where no job that takes --sims ran
    latency_scale: object  # float, or None where no job that takes it ran
    stack_mode: object     # "copy" or "own": how green threads kept their stacks; or None
    ranks: int
    nodes: int
    iterations: int
    date: str
    slurm_job_id: str
    jobs_listed: list
    node_names: list
    cpus: np.ndarray
    first_cpu: np.ndarray
    options: dict = field(default_factory=dict)  # result-changing root attribute -> value
    options_listed: bool = False  # True when the file's result_options named them
    strategies: dict = field(default_factory=dict)  # (job, strategy) -> Strategy
    job_options: dict = field(default_factory=dict)  # job -> the options its results use
    job_key_from: dict = field(default_factory=dict)  # job -> KEY_FROM_* it was read from
    cpu: dict = field(default_factory=dict)  # cpu_model, cpu_flags where the file has them
    phases: object = None  # phase name -> per-rank ns (/ranks/phase_ns), where recorded

    def experiment_key(self, job):
        """A job's rows are one experiment only when every option that changes that
        job's results agrees: the driver's (the book, the stacks) and the job's own, and
        only when they ran on the same CPU: its model and instruction-set flags, where
        the file records them, join the key, so runs from different CPUs are never
        merged. The key is a sorted tuple of (name, value) pairs, so runs that recorded
        different options never share one. A job with no options of its own uses the
        file's."""
        options = dict(self.job_options.get(job, self.options), **self.cpu)
        return tuple(sorted(options.items()))

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
    """HDF5 strings arrive as str (variable-length UTF-8) or as numpy bytes
    (fixed-length, as older files wrote them): both read as str."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    return str(value)


def attr_value(value):
    """An attribute as a plain Python value that compares equal however it was stored:
    str for strings of either kind, int or float for numbers, a tuple for an array."""
    if isinstance(value, (bytes, str)):
        return _text(value)
    if isinstance(value, np.ndarray):
        if value.shape == ():
            return attr_value(value[()])
        return tuple(attr_value(v) for v in value.ravel())
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return _text(value)


def result_option_names(attrs):
    """The root attributes that change a result: those the file's result_options names,
    or, for a file from before it, the fixed list's names the file has. The scaling
    axes are never among them: runs that differ only there are one experiment."""
    if "result_options" in attrs:
        names = [n.strip() for n in _text(attrs["result_options"]).split(",")]
    else:
        names = [n for n in RESULT_OPTIONS_FALLBACK if n in attrs or n in LEGACY_VALUES]
    return [n for n in dict.fromkeys(names) if n and n not in SCALING_AXES]


def read_options(attrs):
    """(name -> value of every result-changing option, whether result_options listed
    them). A name listed but absent reads as None, so it still keeps files apart."""
    listed = "result_options" in attrs
    options = {}
    for name in result_option_names(attrs):
        if name in attrs:
            options[name] = attr_value(attrs[name])
        elif not listed and name in LEGACY_VALUES:
            options[name] = LEGACY_VALUES[name]
        else:
            options[name] = None
    return options, listed


# Root attributes naming the CPU a run had: they join every experiment key.
CPU_ATTRS = ("cpu_model", "cpu_flags")

KEY_FROM_JOB = "job's result_options"
KEY_FROM_ROOT = "file's result_options"
KEY_FROM_FIXED = "fixed list (older file)"


def read_job_options(root_attrs, job_attrs, root_options, root_listed):
    """(name -> value, where the names came from) for one job: the options its
    /<job> group's result_options names (the driver's and the job's own, values read
    from the root), else the file's result_options, else the fixed list."""
    if "result_options" not in job_attrs:
        return dict(root_options), KEY_FROM_ROOT if root_listed else KEY_FROM_FIXED
    names = [n.strip() for n in _text(job_attrs["result_options"]).split(",")]
    options = {}
    for name in dict.fromkeys(names):
        if name and name not in SCALING_AXES:
            options[name] = attr_value(root_attrs[name]) if name in root_attrs else None
    return options, KEY_FROM_JOB


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
    """Refuse other schema versions outright: reading them as a known one would give
    wrong numbers without any error."""
    if "schema_version" not in f.attrs:
        raise SchemaRefused("no schema_version attribute: not a loomdist file")
    version = int(f.attrs["schema_version"])
    if version not in SCHEMA_VERSIONS:
        known = " and ".join(str(v) for v in SCHEMA_VERSIONS)
        raise SchemaRefused(f"schema_version {version}, this analysis reads versions "
                         f"{known}")
    missing = [name for name in ROOT_ATTRS if name not in f.attrs]
    if missing:
        raise InputError(f"root attributes missing: {', '.join(missing)}")


def unit_of(dataset, name):
    """A dataset's unit: its `unit` attribute, or, in a file from before that attribute,
    what its name's suffix says."""
    if "unit" in dataset.attrs:
        return _text(dataset.attrs["unit"])
    for suffix, unit in LEGACY_UNITS:
        if name.endswith(suffix):
            return unit
    return ""


def _read_datasets(group, where, ranks, trades, notes):
    """Sort a strategy group's datasets by shape: [iterations, ranks] per-rank metrics
    and [trades] per-trade columns. A 2-D or 1-D dataset of the wrong size means a
    damaged group; any other shape is a dataset this analysis does not read, noted."""
    per_rank, per_trade, units = {}, {}, {}
    for name, dataset in group.items():
        if not isinstance(dataset, h5py.Dataset):
            continue
        if dataset.dtype.kind not in "iufb":
            notes.append(f"{where}/{name} is not numeric ({dataset.dtype}); left out")
            continue
        shape = dataset.shape
        if len(shape) == 2:
            if shape[1] != ranks or shape[0] < 1:
                raise InputError(f"{where}/{name} has shape {shape}, "
                                 f"expected [iterations, {ranks}]")
            kind = np.float64 if dataset.dtype.kind == "f" else np.int64
            per_rank[name] = np.asarray(dataset[...], dtype=kind)
        elif len(shape) == 1:
            if shape[0] != trades:
                raise InputError(f"{where}/{name} has {shape[0]} rows, expected {trades}")
            per_trade[name] = np.asarray(dataset[...])
        else:
            notes.append(f"{where}/{name} has shape {shape}, neither [iterations, ranks] "
                         f"nor [trades]; left out")
            continue
        units[name] = unit_of(dataset, name)
    return per_rank, per_trade, units


def _read_strategy(group, job, name, ranks, trades, notes):
    """Read one strategy group, checking shapes against the root attributes so that a
    damaged group is refused instead of skewing a table."""
    where = f"{job}/{name}"
    per_rank, per_trade, units = _read_datasets(group, where, ranks, trades, notes)
    for metric in REQUIRED_PER_RANK:
        if metric not in per_rank:
            raise InputError(f"{where} has no {metric} dataset")
    iterations = {data.shape[0] for data in per_rank.values()}
    if len(iterations) != 1:
        raise InputError(f"{where}: its [iterations, ranks] datasets disagree on the "
                         f"iterations ({', '.join(map(str, sorted(iterations)))})")
    if (per_rank["wall_ns"] <= 0).any():
        raise InputError(f"{where}/wall_ns holds times that are not positive")
    attrs = group.attrs
    kept = int(attrs["iteration_kept"]) if "iteration_kept" in attrs else None
    if kept is not None and not 0 <= kept < iterations.pop():
        raise InputError(f"{where}: iteration_kept {kept} is not a measured iteration")
    return Strategy(job=job, name=name, tasks=int(attrs.get("tasks", trades)),
                    threads=int(attrs.get("threads", 0)),
                    critical_path_ns=int(attrs.get("critical_path_ns", 0)),
                    per_rank=per_rank, per_trade=per_trade, units=units,
                    iteration_kept=kept)


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


def _read_phases(f, ranks, notes, path):
    """/ranks/phase_ns as {phase: per-rank ns}, or None in a file from before it; one of
    the wrong shape is noted and left out."""
    if "ranks/phase_ns" not in f:
        return None
    d = f["ranks/phase_ns"]
    names = _text(d.attrs.get("phases", "")).split(",")
    if d.shape != (len(names), ranks):
        notes.append(f"{path}: /ranks/phase_ns has shape {d.shape}, expected "
                     f"[{len(names)}, {ranks}]; its phases are left out")
        return None
    return {n: np.asarray(row, dtype=np.float64) for n, row in zip(names, d[...])}


def _read_run(path, f, notes):
    """Build a Run from an open, schema-checked file. A job the file lists but lacks is
    noted, and the jobs it has are still used."""
    attrs = f.attrs
    ranks, trades = int(attrs["ranks"]), int(attrs["trades"])
    names, cpus, first = _read_ranks(f, ranks)
    listed = [job for job in _text(attrs["jobs"]).split(",") if job]
    options, options_listed = read_options(attrs)
    def optional(name, kind):
        """A root attribute a job writes only when it ran; an older file's legacy value."""
        if name in attrs:
            return kind(attr_value(attrs[name]))
        return None if options_listed else LEGACY_VALUES.get(name)
    run = Run(path=path, seed=int(attrs["seed"]), trades=trades, sims=optional("sims", int),
              latency_scale=optional("latency_scale", float),
              stack_mode=optional("stack_mode", str),
              ranks=ranks, nodes=int(attrs["nodes"]),
              iterations=int(attrs.get("iterations", 0)), date=_text(attrs.get("date", "")),
              slurm_job_id=_text(attrs.get("slurm_job_id", "")), jobs_listed=listed,
              node_names=names, cpus=cpus, first_cpu=first, options=options,
              options_listed=options_listed,
              cpu={n: _text(attrs[n]) for n in CPU_ATTRS if n in attrs},
              phases=_read_phases(f, ranks, notes, path))
    for job in listed:
        if job not in f or not isinstance(f[job], h5py.Group) or not len(f[job]):
            notes.append(f"{path}: job {job} is listed in the jobs attribute but its "
                         f"group is missing; the file's other jobs are used")
            continue
        run.job_options[job], run.job_key_from[job] = read_job_options(
            attrs, f[job].attrs, options, options_listed)
        for name, group in f[job].items():
            if not isinstance(group, h5py.Group):
                continue
            lesser = []
            try:
                run.strategies[(job, name)] = _read_strategy(group, job, name, ranks, trades,
                                                             lesser)
            except InputError as err:
                notes.append(f"{path}: {err}; that strategy is left out")
            notes.extend(f"{path}: {line}" for line in lesser)
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
