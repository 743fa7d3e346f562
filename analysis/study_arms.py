"""Each study's arms: the loomdist (or loomdist-forks) commands of a sitting at --quick or
--full, and the compact data kept from what they wrote.

An arm's data is {"command": text, "attrs": {...}, "strategies": {strategy: {metric:
[one value per measured iteration]}}}: a few numbers per iteration, never the HDF5
file. Ranks are reduced as the seed tables read them: time is the slowest rank's, threads
the highest rank's, memory the sum over ranks.
"""
import json
import os

import h5py
import numpy as np

MIB = 1 << 20
# Metrics kept per iteration from each job's HDF5 groups (mean over ranks unless the
# reducer below says otherwise).
POOL_METRICS = ("rps", "p99_ms", "cgroup_peak_mib", "rss_peak_mib", "stack_resident_mib",
                "capacity_mean", "frozen_mean", "warmup_frozen_mean", "warmup_stack_alloc_mib",
                "stack_alloc_mib", "chunk_allocs", "chunk_reuses", "limit_hits", "killed",
                "mem_limit_mib", "clamped", "errors")
MIXED_METRICS = ("p99_x", "var_x", "over_max", "over_sum", "settle_p99_ms", "alone_p99_ms",
                 "var_per_s", "alone_var_per_s", "hold_p50_us", "late_p99_ms", "differ")
SECONDARY = ("cgroup_peak_mib", "mem_limit_mib", "peak_rss_kib", "clamped", "cpus")


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def _plain(v):
    """An HDF5 attribute as JSON: numpy scalars to Python ones."""
    v = _text(v)
    return v.item() if hasattr(v, "item") else v


def _common(group, tasks):
    """time_ms, ops_s, peak_threads and peak_rss_mib per iteration."""
    wall = np.asarray(group["wall_ns"][...], dtype=float)
    time_ms = wall.max(axis=1) / 1e6
    return {"time_ms": time_ms.tolist(),
            "ops_s": (tasks / (time_ms / 1e3)).tolist(),
            "peak_threads": np.asarray(group["peak_threads"][...]).max(axis=1).tolist(),
            "peak_rss_mib": (np.asarray(group["peak_rss_kib"][...], dtype=float)
                             .sum(axis=1) / 1024).tolist()}


def _means(group, names):
    """Each named [iteration, rank] dataset, averaged over ranks."""
    return {n: np.asarray(group[n][...], dtype=float).mean(axis=1).tolist()
            for n in names if n in group}


def _pool_derived(m):
    """Stack bytes allocated over both phases, and the stack memory pooled threads hold
    beyond what they freeze (capacity the steady state does not use). An iteration that
    served nothing and was not killed measured the load generator, not the server (on a
    crowded machine it may not connect its connections within the phase): its rate is
    no sample, and `unserved` counts it."""
    m["unserved"] = [1.0 if r == 0 and k == 0 else 0.0 for r, k in zip(m["rps"], m["killed"])]
    m["stack_alloc_total_mib"] = [a + b for a, b in zip(m["warmup_stack_alloc_mib"],
                                                        m["stack_alloc_mib"])]
    m["wasted_mib"] = [r * (1 - f / c) if c > 0 else 0.0 for r, f, c in
                       zip(m["stack_resident_mib"], m["frozen_mean"], m["capacity_mean"])]


# What an unserved or killed iteration still measures: the group's counters and its
# peak.
SERVED_OR_NOT = ("unserved", "killed", "limit_hits", "mem_limit_mib", "clamped",
                 "cgroup_peak_mib")


def served(arms):
    """The arms as the page and the verdicts read them: in a pool arm, the figures of an
    iteration that was unserved, or killed at its memory bound, are withdrawn (None), all
    but SERVED_OR_NOT. A killed server's rate of 0 is the bound's verdict on it, not a
    rate: it is read from `killed` and `limit_hits`, never averaged in."""
    for arm in arms.values():
        for m in arm["strategies"].values():
            flags = [bool(u) or bool(k) for u, k in
                     zip(m.get("unserved", []), m.get("killed", []))]
            if not any(flags):
                continue
            for k in m:
                if k not in SERVED_OR_NOT:
                    m[k] = [None if u else v for v, u in zip(m[k], flags)]
    return arms


def read_h5(path):
    """An arm's data from one loomdist HDF5 file."""
    out = {"attrs": {}, "strategies": {}}
    with h5py.File(path, "r") as f:
        for key in ("cpu_model", "git_commit", "trades", "sims",
                    "latency_scale", "pin_fraction", "os_threads", "iterations", "ranks",
                    "connections", "think_ms", "warmup_s", "measure_s", "mem_limit", "load",
                    "stack_mode", "warmup_depth", "study_phases", "yield_every",
                    "settle_cpus"):
            if key in f.attrs:
                out["attrs"][key] = _plain(f.attrs[key])
        trades = int(f.attrs["trades"])
        for job in ("settle", "var", "pool", "mixed"):
            if job not in f:
                continue
            for name, g in f[job].items():
                if not isinstance(g, h5py.Group):
                    continue
                m = _common(g, trades)
                m.update(_means(g, POOL_METRICS if job == "pool" else
                                MIXED_METRICS if job == "mixed" else ()))
                if job == "pool":
                    _pool_derived(m)
                out["strategies"][name] = m
        _status_differs(f, out)
    return out


def _status_differs(f, out):
    """Trades whose settle status under green-pinned differs from green's: a pinned run
    that lost trades would say so here; a silent one gives 0."""
    if "settle" not in f or not {"green", "green-pinned"} <= set(f["settle"]):
        return
    a = np.asarray(f["settle"]["green"]["status"][...])
    b = np.asarray(f["settle"]["green-pinned"]["status"][...])
    out["strategies"]["green-pinned"]["status_differs"] = [int((a != b).sum())]


def read_forks_json(path):
    """An arm's data from one loomdist-forks JSON file: each model's ops/s per measured
    iteration of every fork, and the secondary metrics the same way."""
    with open(path) as f:
        doc = json.load(f)
    out = {"attrs": {}, "strategies": {}}
    for b in doc:
        if not b["benchmark"].startswith("loomdist.models."):
            continue
        p = b["params"]
        out["attrs"] = {"tasks": int(p["tasks"]), "profile": p["profile"],
                        "delay_ms": float(p["delay_ms"]), "thread_cap": int(p["thread_cap"]),
                        "forks": b["forks"], "warmup_iterations": b["warmupIterations"],
                        "measurement_iterations": b["measurementIterations"]}
        m = {"ops_s": [v for fork in b["primaryMetric"]["rawData"] for v in fork]}
        for name in SECONDARY:
            sec = b["secondaryMetrics"].get(name)
            if sec:
                m[name] = [v for fork in sec["rawData"] for v in fork]
        out["strategies"][p["model"]] = m
    return out


def merge(a, b):
    """Two rounds of one arm as one: each metric's iterations end to end."""
    for s, metrics in b["strategies"].items():
        mine = a["strategies"].setdefault(s, {})
        for k, v in metrics.items():
            mine[k] = mine.get(k, []) + v
    a["rounds"] = a.get("rounds", 1) + 1
    return a


# The arms of each study at a mode: "full" (the seeds' sizes where the machine allows),
# "quick" (at most 5 minutes a study on 2 CPUs) or "smoke" (seconds: the generator's
# end-to-end test). Each arm is (name, kind, options); kind "loomdist" runs `loomdist
# OPTIONS --quiet --output F.h5`, "forks" runs `loomdist-forks FORK-OPTIONS -- loomdist
# OPTIONS --quiet` with --json. The page states each size.
def settlement(mode):
    settle, pinned, var = {
        "full": (["8000", "1", "5"], ["8000", "0.1", "3"], ["8000", "5"]),
        "quick": (["8000", "0.1", "5"], ["8000", "0.01", "3"], ["2000", "5"]),
        "smoke": (["800", "0.02", "3"], ["400", "0.01", "3"], ["200", "3"]),
    }[mode]
    sims = "2000" if mode == "smoke" else "20000"
    return [
        ("settle", "loomdist", ["--jobs", "settle", "--trades", settle[0], "--latency-scale",
                                settle[1], "--pin-fraction", "0.01", "--iterations",
                                settle[2]]),
        ("pinned-all", "loomdist", ["--jobs", "settle", "--strategies", "green,green-pinned",
                                    "--trades", pinned[0], "--latency-scale", pinned[1],
                                    "--pin-fraction", "1", "--iterations", pinned[2]]),
        ("var", "loomdist", ["--jobs", "var", "--trades", var[0], "--sims", sims,
                             "--iterations", var[1]]),
    ]


LOOSE_MIB, TIGHT_MIB = 448, 100


def pooling(mode, load):
    size = {"full": ["--connections", "10000", "--study-phases", "--iterations", "3"],
            "quick": ["--connections", "10000", "--warmup-s", "3", "--measure-s", "5",
                      "--iterations", "3"],
            "smoke": ["--connections", "200", "--warmup-s", "1", "--measure-s", "1",
                      "--iterations", "2"]}[mode]
    base = ["--jobs", "pool", "--stack-mode", "copy", "--load", load] + size
    return [
        ("loose", "loomdist", base + ["--mem-limit", str(LOOSE_MIB * MIB)]),
        ("tight", "loomdist", base + ["--mem-limit", str(TIGHT_MIB * MIB)]),
    ]


def models(mode):
    forks = {"full": ["--study"],
             "quick": ["--forks", "2", "--warmup-iterations", "1",
                       "--measurement-iterations", "3"],
             "smoke": ["--forks", "1", "--warmup-iterations", "0",
                       "--measurement-iterations", "2"]}[mode]
    light, heavy = ("100", "2000") if mode == "smoke" else ("1000", "50000")
    arms = []
    for load, tasks in (("light", light), ("heavy", heavy)):
        for profile in ("low", "high"):
            opts = ["--jobs", "models", "--tasks", tasks, "--profile", profile]
            if mode != "full" and load == "heavy":
                opts += ["--strategies", "threads,green,stackless,hybrid"]
            arms.append((f"{load}-{profile}", "forks", forks + ["--"] + opts))
    return arms


def split(mode):
    size = {"full": ["--trades", "8000", "--sims", "20000", "--iterations", "5"],
            "quick": ["--trades", "4000", "--sims", "20000", "--iterations", "3"],
            "smoke": ["--trades", "400", "--sims", "2000", "--latency-scale", "0.1",
                      "--iterations", "2"]}[mode]
    return [("mixed", "loomdist", ["--jobs", "mixed"] + size)]
