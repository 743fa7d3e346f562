"""The report's tables as rows of raw numbers: seed-style tables, scaling series, the
Amdahl fits and single- against multi-node throughput.

Rows keep full precision; the Markdown rounds them for reading and the CSV keeps them
for anyone who wants to check or re-plot.
"""
import csv
import os
from dataclasses import dataclass

import numpy as np

from . import stats

# peak_os_threads is the highest single rank's peak (as the console prints it);
# os_threads_all_ranks is the total over ranks, a different number under its own name.
SEED_COLUMNS = ["experiment", "job", "nodes", "ranks", "strategy", "tasks", "iterations",
                "time_ms", "time_ms_ci", "throughput_ops", "throughput_ops_ci",
                "peak_os_threads", "peak_os_threads_ci", "peak_os_threads_min",
                "peak_os_threads_max", "os_threads_all_ranks", "os_threads_all_ranks_ci",
                "memory_mib", "memory_mib_ci"]
# Every [iteration, rank] dataset of every strategy, whatever the job, with its unit.
METRICS_COLUMNS = ["experiment", "job", "nodes", "ranks", "strategy", "metric", "unit",
                   "iterations", "mean", "mean_ci", "rank_min", "rank_max"]
SCALING_COLUMNS = ["series", "scaling", "job", "strategy", "experiment", "nodes", "ranks",
                   "cores", "trades", "trades_per_rank", "time_ms", "throughput_ops",
                   "speedup", "efficiency", "karp_flatt", "imbalance", "baseline"]
AMDAHL_COLUMNS = ["series", "job", "strategy", "points", "serial_fraction", "base_time_ms",
                  "rms_residual_ms", "relative_residual"]
NODES_COLUMNS = ["experiment", "job", "strategy", "single", "single_throughput_ops",
                 "multi", "multi_throughput_ops", "ratio", "reading"]
# Ratios within this band of 1 read as "about the same": iterations vary by more.
SAME_BAND = 0.10


@dataclass
class Series:
    """Configurations compared for scaling: strong (one experiment, same total trades)
    or weak (same trades per rank, so one experiment per rank count)."""
    label: str
    kind: str
    description: str
    configs: list


def write_csv(path, columns, rows):
    """One CSV per table, with a header row, so spreadsheets and pandas read it as is."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in columns})


def summaries(experiment):
    """(job, strategy, summary) of every layout, job by job, in table order."""
    for job in experiment.jobs():
        for config in experiment.configs:
            for strategy in experiment.strategies(job):
                s = config.summaries.get((job, strategy))
                if s is not None:
                    yield job, strategy, s


def seed_rows(experiment):
    """The seed studies' table, one row per strategy, for each job and layout."""
    rows = []
    for job, strategy, s in summaries(experiment):
        rows.append({
            "experiment": experiment.label, "job": job, "nodes": s.nodes,
            "ranks": s.ranks, "strategy": strategy, "tasks": s.tasks,
            "iterations": s.iterations,
            "time_ms": s.time_ms[0], "time_ms_ci": s.time_ms[1],
            "throughput_ops": s.throughput[0], "throughput_ops_ci": s.throughput[1],
            "peak_os_threads": s.peak_threads[0],
            "peak_os_threads_ci": s.peak_threads[1],
            "peak_os_threads_min": s.peak_threads_range[0],
            "peak_os_threads_max": s.peak_threads_range[1],
            "os_threads_all_ranks": s.os_threads_all_ranks[0],
            "os_threads_all_ranks_ci": s.os_threads_all_ranks[1],
            "memory_mib": s.memory_mib[0], "memory_mib_ci": s.memory_mib[1]})
    return rows


def metrics_rows(experiment):
    """Every per-iteration, per-rank dataset, read generically: the mean over ranks and
    iterations with the interval of the per-iteration rank means, and the smallest and
    largest single rank in any iteration."""
    rows = []
    for job, strategy, s in summaries(experiment):
        for metric in sorted(s.per_rank):
            data = np.asarray(s.per_rank[metric], dtype=float)
            mean, half = stats.mean_ci(data.mean(axis=1))
            rows.append({"experiment": experiment.label, "job": job,
                         "nodes": s.nodes, "ranks": s.ranks, "strategy": strategy,
                         "metric": metric, "unit": s.units.get(metric, ""),
                         "iterations": data.shape[0], "mean": mean, "mean_ci": half,
                         "rank_min": float(data.min()),
                         "rank_max": float(data.max())})
    return rows


def strong_series(experiment):
    """One experiment's layouts all settle the same book, so they scale strongly; a
    single layout is no series."""
    if len(experiment.configs) < 2:
        return []
    return [Series(experiment.label, "strong",
                   f"{experiment.label}: {experiment.trades} trades in total at every size",
                   experiment.configs)]


def weak_series(experiments):
    """Layouts from different experiments whose result-changing options agree except for
    the trades, and that hold the same trades per rank, scale weakly; each such set of
    two or more rank counts is one series."""
    groups = {}
    for e in experiments:
        rest = tuple(sorted((n, repr(v)) for n, v in e.options.items() if n != "trades"))
        for c in e.configs:
            key = (rest, round(e.trades / c.ranks, 6))
            groups.setdefault(key, []).append(c)
    series = []
    for key, configs in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if len({c.ranks for c in configs}) < 2:
            continue
        configs = sorted(configs, key=lambda c: (c.ranks, c.nodes))
        label = f"W{len(series) + 1}"
        series.append(Series(label, "weak", f"{label}: {key[-1]:g} trades per rank, from "
                             f"{', '.join(sorted({c.experiment for c in configs}))}", configs))
    return series


def scaling_rows(series, job, strategy):
    """Speedup, efficiency, Karp-Flatt and imbalance of each layout against the smallest
    one that ran the strategy. Karp-Flatt is given for strong scaling only, where the
    work is fixed as its derivation assumes."""
    points = [(c, c.summaries[(job, strategy)]) for c in series.configs
              if (job, strategy) in c.summaries]
    if len(points) < 2:
        return []
    base_config, base = points[0]
    rows = []
    for config, s in points:
        relative = s.ranks / base.ranks
        gain = stats.speedup(base.time_ms[0], base.tasks, s.time_ms[0], s.tasks)
        rows.append({
            "series": series.label, "scaling": series.kind, "job": job, "strategy": strategy,
            "experiment": config.experiment, "nodes": s.nodes, "ranks": s.ranks,
            "cores": s.cores, "trades": s.trades, "trades_per_rank": s.trades / s.ranks,
            "time_ms": s.time_ms[0], "throughput_ops": s.throughput[0], "speedup": gain,
            "efficiency": stats.efficiency(gain, relative),
            "karp_flatt": stats.karp_flatt(gain, relative) if series.kind == "strong" else None,
            "imbalance": s.imbalance, "baseline": base_config.label})
    return rows


def amdahl_row(series, job, strategy):
    """Fit Amdahl's law to a strong series' times against its rank counts."""
    points = [c.summaries[(job, strategy)] for c in series.configs
              if (job, strategy) in c.summaries]
    fit = stats.amdahl_fit([s.ranks for s in points], [s.time_ms[0] for s in points])
    if fit is None:
        return None
    mean_time = sum(s.time_ms[0] for s in points) / len(points)
    return {"series": series.label, "job": job, "strategy": strategy, "points": fit.points,
            "serial_fraction": fit.serial_fraction, "base_time_ms": fit.base_time,
            "rms_residual_ms": fit.rms_residual,
            "relative_residual": fit.rms_residual / mean_time}


def node_reading(one, multi):
    """One line that says what a multi- against single-node throughput ratio means, from
    the two summaries; a latency-bound settle run is recognised by its critical path."""
    ratio = multi.throughput[0] / one.throughput[0]
    where = ("at the same rank count" if one.ranks == multi.ranks
             else f"({multi.ranks} ranks against {one.ranks})")
    if ratio >= 1.0 + SAME_BAND:
        return f"{multi.nodes} nodes give {ratio:.2f}x the one-node throughput {where}"
    if ratio > 1.0 - SAME_BAND:
        critical_ms = multi.critical_path_ns / 1e6
        if multi.job == "settle" and 0 < critical_ms and multi.time_ms[0] <= 1.5 * critical_ms:
            return (f"about the same on {multi.nodes} nodes {where}: the run takes "
                    f"{multi.time_ms[0]:.3g} ms and its critical path is {critical_ms:.3g} ms, "
                    f"which more nodes cannot shorten")
        return (f"about the same on {multi.nodes} nodes {where}: the extra nodes add "
                f"nothing this strategy uses")
    return (f"{ratio:.2f}x of the one-node throughput on {multi.nodes} nodes {where}: "
            f"spreading out costs more than the added nodes give")


def node_rows(experiment):
    """Throughput per strategy on one node against each multi-node layout. The one-node
    side is the same rank count where there is one, else the largest one-node layout."""
    rows = []
    for job in experiment.jobs():
        for strategy in experiment.strategies(job):
            having = [c for c in experiment.configs if (job, strategy) in c.summaries]
            single = [c for c in having if c.nodes == 1]
            for multi in (c for c in having if c.nodes > 1 and single):
                same = [c for c in single if c.ranks == multi.ranks]
                one = same[0] if same else max(single, key=lambda c: c.ranks)
                a, b = one.summaries[(job, strategy)], multi.summaries[(job, strategy)]
                rows.append({"experiment": experiment.label, "job": job, "strategy": strategy,
                             "single": one.label, "single_throughput_ops": a.throughput[0],
                             "multi": multi.label, "multi_throughput_ops": b.throughput[0],
                             "ratio": b.throughput[0] / a.throughput[0],
                             "reading": node_reading(a, b)})
    return rows


def write_all(folder, tables):
    """Write each named table (name -> (columns, rows)) as folder/<name>.csv."""
    os.makedirs(folder, exist_ok=True)
    for name, (columns, rows) in tables.items():
        write_csv(os.path.join(folder, f"{name}.csv"), columns, rows)
