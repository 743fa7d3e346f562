"""Synthetic loomdist files (schema version 1) for testing the analysis without the binary.

The timings follow a simple model of each strategy, so the report's findings have
something plausible to judge, and multi-node layouts can be made on one machine.

Strings are written the way current loomdist writes them, variable-length UTF-8 (h5py
reads them as str), or with strings="fixed" as older files did, fixed-length bytes (h5py
reads numpy bytes). options adds result-changing root attributes, and
result_options=True lists them, with the book's, in the `result_options` attribute.
job_result_options=True does as loomdist does now: the root holds a job's options only
when it ran, and each /<job> group's `result_options` names the driver's options and
that job's own.
"""
import heapq

import h5py
import numpy as np

SETTLE = ("threads", "green", "green-pinned", "green-monitor", "callbacks")
VAR = ("sequential", "green", "pool", "steal")
# (low, high) ms of the five settle calls; the fourth is made for sells only.
CALLS_MS = ((1, 5), (60, 160), (40, 120), (50, 140), (1, 5))
POOL_SIZE = 200


def _trade_latencies_ns(rng, trades, scale):
    """Each trade's total call latency, the time it takes when it never waits."""
    draws = np.stack([rng.integers(lo, hi + 1, trades) for lo, hi in CALLS_MS], axis=1)
    sells = rng.integers(0, 2, trades)
    draws[:, 3] *= sells
    return (draws.sum(axis=1) * scale * 1e6).astype(np.int64), sells


def _pool_finish_ns(latency_ns, workers):
    """When each trade finishes on a pool of workers taking trades in order."""
    free = [0] * min(workers, latency_ns.size)
    heapq.heapify(free)
    finish = np.empty_like(latency_ns)
    for i, lat in enumerate(latency_ns):
        start = heapq.heappop(free)
        finish[i] = start + lat
        heapq.heappush(free, finish[i])
    return finish


def _settle_model(strategy, lat, cpus):
    """Per-trade finish times, peak threads and RSS KiB of one rank's settle strategy."""
    if strategy == "threads":
        return _pool_finish_ns(lat, POOL_SIZE), POOL_SIZE + 3, 8000 + 72 * POOL_SIZE
    if strategy == "green-pinned":
        return _pool_finish_ns(lat, cpus * 4), cpus + 3, 9000 + 9 * lat.size
    threads = 2 if strategy == "callbacks" else cpus + 3
    return lat + 50_000, threads, 8000 + (2 if strategy == "callbacks" else 9) * lat.size


def _var_model(strategy, trades, sims, cpus):
    """Wall ns, peak threads and RSS KiB of one rank's var strategy."""
    serial = trades * sims * 60.0
    parallel = {"sequential": 1.0, "green": 0.9 * cpus, "pool": 0.97 * cpus,
                "steal": 0.95 * cpus}[strategy]
    threads = 1 if strategy == "sequential" else cpus + 1
    return serial / parallel, threads, 6000 + trades * sims * 8 // 1024


# Root attributes the book itself contributes to result_options.
BOOK_OPTIONS = ("seed", "trades", "sims", "latency_scale", "partition")
# The options each job owns; any other result option is the driver's, shared by all.
JOB_OPTIONS = {"settle": ("latency_scale", "os_threads", "pin_fraction", "fail_rate"),
               "var": ("sims", "var_kernel")}


def put_text(attrs, name, value, strings):
    """A string attribute: variable-length UTF-8 (strings="utf8", what loomdist writes
    now) or fixed-length bytes (strings="fixed", what older files hold)."""
    if strings == "fixed":
        attrs[name] = np.bytes_(value.encode("utf-8")) if value else np.bytes_(b"\0")[:0]
    else:
        attrs[name] = value


def _put_option(attrs, name, value, strings):
    """One result-changing option with the type the C side gives it."""
    if isinstance(value, str):
        put_text(attrs, name, value, strings)
    elif isinstance(value, float):
        attrs[name] = np.float64(value)
    else:
        attrs[name] = np.int32(value)


def _owned_by_others(name, ran):
    """Whether an option belongs only to jobs that did not run."""
    owners = [job for job, names in JOB_OPTIONS.items() if name in names]
    return bool(owners) and not set(owners) & set(ran)


def _write_job_keys(f, names, strings):
    """Each /<job> group's result_options: the driver's options and the job's own."""
    for job in JOB_OPTIONS:
        if job in f:
            own = [n for n in names if not _owned_by_others(n, [job])]
            put_text(f[job].attrs, "result_options", ",".join(own), strings)


def _write_root(f, schema_version, seed, trades, sims, ranks, nodes, scale, iterations, jobs,
                stack_mode, strings, partition, options, result_options, ran=None):
    """The root attributes the schema lists; stack_mode None leaves out the ones a file
    written before them lacks."""
    a = f.attrs
    a["schema_version"] = np.int32(schema_version)
    for name, value in (("software_version", "0.1.0"), ("git_commit", "synthetic"),
                        ("date", "2024-01-01T00:00:00Z"), ("command_line", "synthetic"),
                        ("mpi_version", "x"), ("hdf5_version", "x"), ("libuv_version", "x"),
                        ("hwloc_version", "x"), ("partition", partition), ("slurm_job_id", ""),
                        ("jobs", ",".join(jobs))):
        put_text(a, name, value, strings)
    a["seed"], a["trades"], a["sims"] = np.uint64(seed), np.uint64(trades), np.uint32(sims)
    a["ranks"], a["nodes"] = np.int32(ranks), np.int32(nodes)
    a["ranks_per_node"] = np.int32(-(-ranks // nodes))
    a["latency_scale"] = np.float64(scale)
    a["warmup"], a["iterations"] = np.int32(1), np.int32(iterations)
    names = list(BOOK_OPTIONS)
    if stack_mode is not None:
        put_text(a, "stack_mode", stack_mode, strings)
        a["stack_kib"] = np.int32(64)
        names += ["stack_mode", "stack_kib"]
    for name, value in (options or {}).items():
        _put_option(a, name, value, strings)
        names.append(name)
    if ran is not None:  # a job's options are written only when it ran
        for name in [n for n in names if _owned_by_others(n, ran)]:
            del a[name]
        names = [n for n in names if not _owned_by_others(n, ran)]
    if result_options:
        put_text(a, "result_options", ",".join(names), strings)
    return names


def _write_ranks(f, ranks, nodes, cores_per_node, counts):
    """The /ranks table: ranks are spread over nodes in blocks, sharing each node's CPUs."""
    per_node = -(-ranks // nodes)
    node = np.arange(ranks) // per_node
    local = np.arange(ranks) % per_node
    cpus = np.full(ranks, max(1, cores_per_node // per_node), dtype=np.int32)
    first = (local * cpus) % cores_per_node
    g = f.create_group("ranks")
    g["node_name"] = np.array([f"node{n + 1}" for n in node], dtype=h5py.string_dtype())
    g["local_rank"], g["cpus"] = local.astype(np.int32), cpus
    g["first_cpu"] = first.astype(np.int32)
    g["trades"] = counts.astype(np.uint64)
    g["oversubscribed"] = (np.full(ranks, per_node > cores_per_node)).astype(np.uint8)
    return cpus


UNITS = {"wall_ns": "ns", "peak_threads": "threads", "peak_rss_kib": "KiB",
         "utime_us": "us", "stime_us": "us", "nvcsw": "switches", "nivcsw": "switches",
         "status": "", "failed_check": "", "latency_ns": "ns", "var": "USD"}


def _write_metrics(group, walls, threads, rss, rng):
    """The per-iteration, per-rank datasets, with a few percent of noise per iteration."""
    iterations = walls.shape[0]
    group["wall_ns"] = walls.astype(np.int64)
    group["peak_threads"] = np.tile(threads, (iterations, 1)).astype(np.int64)
    rss = np.tile(rss, (iterations, 1)) * rng.uniform(0.98, 1.02, walls.shape)
    group["peak_rss_kib"] = rss.astype(np.int64)
    for name in ("utime_us", "stime_us", "nvcsw", "nivcsw"):
        group[name] = (walls // 1000 // 3).astype(np.int64)


def _strategy_group(f, job, name, trades, threads):
    """A /<job>/<strategy> group with the attributes every job has."""
    g = f.create_group(f"{job}/{name}")
    g.attrs["job"], g.attrs["strategy"] = job, name
    g.attrs["tasks"], g.attrs["threads"] = np.uint64(trades), np.int32(threads)
    return g


def _finish_groups(f, strings, units, iteration_kept):
    """Give every strategy group's strings the file's kind, each dataset its unit, and
    the group the measured iteration its per-trade columns come from."""
    for job in ("settle", "var"):
        if job not in f:
            continue
        for name, g in f[job].items():
            put_text(g.attrs, "job", job, strings)
            put_text(g.attrs, "strategy", name, strings)
            if iteration_kept is not None:
                g.attrs["iteration_kept"] = np.int32(iteration_kept)
            if units:
                for dataset_name, dataset in g.items():
                    put_text(dataset.attrs, "unit", UNITS.get(dataset_name, ""), strings)


def _write_settle(f, strategies, lat, bounds, cpus, noise, rng):
    """Every settle strategy: each rank's trades run under the strategy's model."""
    trades, ranks = lat.size, cpus.size
    for name in strategies:
        g = _strategy_group(f, "settle", name, trades, POOL_SIZE)
        g.attrs["critical_path_ns"] = np.int64(lat.max())
        finish, walls, threads, rss = np.empty(trades, np.int64), [], [], []
        for r in range(ranks):
            part = slice(bounds[r], bounds[r + 1])
            done, th, kib = _settle_model(name, lat[part], int(cpus[r]))
            finish[part] = done
            walls.append(done.max() + 200_000)
            threads.append(th)
            rss.append(kib)
        _write_metrics(g, np.array(walls) * noise(), np.array(threads), np.array(rss), rng)
        g["status"] = np.zeros(trades, np.uint8)
        g["failed_check"] = np.full(trades, -1, np.int8)
        g["latency_ns"] = finish


def _write_var(f, strategies, counts, sims, cpus, noise, rng, book):
    """Every var strategy, all giving the same VaR per trade, as the real ones must."""
    values = book.uniform(100.0, 5000.0, int(counts.sum()))
    for name in strategies:
        g = _strategy_group(f, "var", name, values.size, cpus[0])
        model = [_var_model(name, int(c), sims, int(cpus[r])) for r, c in enumerate(counts)]
        _write_metrics(g, np.array([m[0] for m in model]) * noise(),
                       np.array([m[1] for m in model]), np.array([m[2] for m in model]), rng)
        g["var"] = values


def write_run(path, ranks=1, nodes=1, trades=400, seed=42, sims=2000, latency_scale=0.02,
              iterations=5, jobs=("settle", "var"), settle=SETTLE, var=VAR,
              schema_version=2, listed_jobs=None, cores_per_node=2, noise_seed=0,
              stack_mode=None, strings="utf8", partition="block", options=None,
              result_options=False, units=False, iteration_kept=None,
              job_result_options=False):
    """Write one synthetic run. listed_jobs (default jobs) is what the jobs attribute
    claims, so a file can list a job whose group it lacks. iteration_kept "last" names
    the last measured iteration."""
    rng = np.random.default_rng(noise_seed + 1000 * ranks + nodes)
    book = np.random.default_rng(seed)
    lat, sells = _trade_latencies_ns(book, trades, latency_scale)
    counts = np.array([len(a) for a in np.array_split(np.arange(trades), ranks)])
    bounds = np.concatenate([[0], np.cumsum(counts)])

    def noise():
        return rng.lognormal(0.0, 0.03, (iterations, ranks))

    with h5py.File(path, "w") as f:
        names = _write_root(f, schema_version, seed, trades, sims, ranks, nodes,
                            latency_scale, iterations, listed_jobs or jobs, stack_mode,
                            strings, partition, options, result_options,
                            jobs if job_result_options else None)
        cpus = _write_ranks(f, ranks, nodes, cores_per_node, counts)
        t = f.create_group("trades")
        t["id"] = np.arange(trades, dtype=np.uint64)
        t["side"] = sells.astype(np.uint8)
        t["rank"] = np.repeat(np.arange(ranks), counts).astype(np.int32)
        if "settle" in jobs:
            _write_settle(f, settle, lat, bounds, cpus, noise, rng)
        if "var" in jobs:
            _write_var(f, var, counts, sims, cpus, noise, rng, book)
        kept = iterations - 1 if iteration_kept == "last" else iteration_kept
        _finish_groups(f, strings, units, kept)
        if job_result_options:
            _write_job_keys(f, names, strings)
