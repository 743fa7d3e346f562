#!/usr/bin/env python3
"""Drive loomdist's SMPI skeleton from real runs, and compare or sweep.

calibrate: a real loomdist HDF5 run gives the skeleton its per-rank work (each
strategy's ns per trade per iteration, prepare's ns per trade), the percentile columns
the table gathers and the file's datasets and bytes per trade; a one-rank reference
run gives the rates the rest is predicted with, never replayed: rank 0's gather ns
per trade, the write's ns per byte and the ns per byte at which rank 0 deals the
trades (its one-rank scatter, a copy into new memory). The book and the communication
are simulated.

  predict.py platform --template sim/platforms/local.xml PINGPONG.txt ... > local.xml
calibrates a local platform on this machine: the median latency and bandwidth of
loomdist-pingpong's runs (its output, one file each) on every link of the template.

  predict.py validate --skeleton loomdist-sim --platform sim/platforms/local.xml \\
      --reference ONE_RANK.h5 RUN.h5 ...
prints measured against predicted (makespan, scatter, gather) for each rank count
(--by nodes: each node count, for Slurm runs) and exits 1 when a makespan is off by
more than 10% or a scatter or gather by more than 25%; --csv FILE also writes the
table for loomdist-report --validation.

  predict.py sweep --skeleton loomdist-sim --platform sim/platforms/hpc-fattree.xml \\
      --calibration RUN.h5 --reference ONE_RANK.h5 --out predicted.csv
simulates strong (8,000 and 8,000,000 trades) and weak (8,000 per rank) scaling from
1 to 1,024 nodes, block, cyclic and ranges, and writes every point to a CSV whose every row
says predicted and names its platform.

The makespan is the sum of the phases from the book to the file closed, the slowest
rank's: start-up and the checks happen before any work and are not simulated.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import h5py
import numpy as np

PHASES = ["startup", "checks", "book", "scatter", "prepare", "strategies", "gather", "write"]
MODELLED = PHASES[2:]
# Rank 0's cost of dealing the trades, per byte, is timed by the one-rank references'
# scatter (a copy to itself) where they deal trades. References under --partition
# ranges copy none, and take this instead: 2.05 GB/s, the median one-rank scatter of
# 200,000 trades on an AVX-512 Intel Xeon VM (lscpu "Intel(R) Xeon(R) Processor",
# family 6 model 167).
COPY_NS_PER_BYTE = 1 / 2.05
TRADE_BYTES = 48  # sizeof(ld_trade), lib/trade/book.h
TOLERANCE = {"makespan": 0.10, "scatter": 0.25, "gather": 0.25}
# A bounded figure also holds when predicted and measured differ by less than this:
# a relative bound means nothing for a phase of microseconds (the scatter of index
# ranges), whose measurement is the clock's and the scheduler's noise.
ABSOLUTE_S = 0.001


def phases_of(f):
    """{phase: per-rank ns array} from /ranks/phase_ns."""
    d = f["ranks/phase_ns"]
    names = d.attrs["phases"].split(",")
    return {n: d[k].astype(float) for k, n in enumerate(names)}


def summary(ph):
    """The slowest rank's makespan and each modelled phase, in s."""
    total = sum(ph[p] for p in MODELLED)
    out = {"makespan": total.max() / 1e9}
    out.update({p: ph[p].max() / 1e9 for p in MODELLED})
    return out


def count_datasets(f):
    n = [0]
    f.visititems(lambda _, o: n.__setitem__(0, n[0] + isinstance(o, h5py.Dataset)))
    return n[0]


def bytes_per_trade(f):
    """The bytes the file holds per trade: every dataset with one row per trade."""
    trades = int(f.attrs["trades"])
    b = [0]

    def add(_, o):
        if isinstance(o, h5py.Dataset) and o.shape and o.shape[0] == trades:
            b[0] += o.dtype.itemsize * int(np.prod(o.shape[1:], dtype=int))
    f.visititems(add)
    return b[0]


def reference(path):
    """A one-rank run's rates, which the other runs are predicted with rather than
    replayed: the write's ns per byte of file on its one aggregator, rank 0's gather
    ns per trade per percentile column, and (but under ranges) rank 0's ns per byte of
    the trades it deals."""
    with h5py.File(path, "r") as f:
        ph = phases_of(f)
        if int(f.attrs["ranks"]) != 1:
            sys.exit(f"predict.py: --reference {path} is not a one-rank run")
        job = f[f.attrs["jobs"].split(",")[0]]
        columns = sum(1 for s in job for k in job[s] if k.startswith("p50_"))
        trades = int(f.attrs["trades"])
        per_trade = bytes_per_trade(f)
        partition = f.attrs["partition"]
    rates = {"write-ns-per-byte": ph["write"][0] / (per_trade * trades),
             "gather-ns": ph["gather"][0] / (trades * max(columns, 1))}
    if partition != "ranges":
        rates["copy-ns"] = ph["scatter"][0] / (trades * TRADE_BYTES)
    return rates


def bound_ns(group):
    """A strategy's lower bound in ns, the job's attribute ending in _ns, else 0."""
    return float(next((v for k, v in group.attrs.items() if k.endswith("_ns")), 0))


def calibrate(path, rates):
    """The skeleton's arguments that replay one real run's per-rank work."""
    with h5py.File(path, "r") as f:
        jobs = f.attrs["jobs"].split(",")
        if len(jobs) != 1:
            sys.exit(f"predict.py: {path} ran {len(jobs)} jobs; calibrate on one")
        job = f[jobs[0]]
        trades_rank = f["ranks/trades"][...].astype(float)
        work, pct = [], 0
        ph = phases_of(f)
        warmup = int(f.attrs["warmup"])
        iterations = int(f.attrs["iterations"])
        walls = [job[name]["wall_ns"][...].astype(float).mean(axis=0) for name in job]
        first = 1 if warmup == 0 and len(walls) > 1 and jobs[0] == "var" else 0
        runs = [warmup + iterations + (first if k == 0 else 0) for k in range(len(walls))]
        # Each strategy's share of the rank's strategies phase, which also holds what
        # its wall time leaves out (stacks, the per-iteration percentiles, the waits).
        timed = sum(n * w for n, w in zip(runs, walls))
        scale = ph["strategies"] / timed
        # A strategy's lower bound (settle's critical path) is the part of an
        # iteration that does not shrink with the trades; the rest is per trade.
        fixed = [min(bound_ns(job[name]), float(w.min())) for name, w in zip(job, walls)]
        work = [float(np.mean((w * scale - c) / trades_rank)) for w, c in zip(walls, fixed)]
        pct = sum(1 for k in job[next(iter(job))] if k.startswith("p50_"))
        args = {"trades": int(f.attrs["trades"]), "seed": int(f.attrs["seed"]),
                "partition": f.attrs["partition"], "warmup": warmup,
                "first-warmup": first, "iterations": iterations,
                "work": ",".join(f"{w:.4f}" for w in work),
                "fixed": ",".join(f"{c:.0f}" for c in fixed),
                "prepare": float(np.mean(ph["prepare"] / trades_rank)),
                "pct-columns": pct, "datasets": count_datasets(f),
                "bytes-per-trade": bytes_per_trade(f),
                "ranks-per-node": int(f.attrs["ranks_per_node"])}
        args.update(rates)
        args.setdefault("copy-ns", COPY_NS_PER_BYTE)
        return args, int(f.attrs["ranks"]), summary(ph)


def shared_cores(platform, factor):
    """The platform with every bandwidth divided by factor, in a temporary file: on one
    machine whose ranks outnumber its cores, the copies that carry the messages are
    CPU work, done at cores/ranks of a core."""
    text = open(platform).read()
    text = re.sub(r'((?:bb_|loopback_)?bw)="([0-9.]+)GBps"',
                  lambda m: f'{m[1]}="{float(m[2]) / factor:g}GBps"', text)
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as t:
        t.write(text)
    return t.name


def simulate(skeleton, platform, ranks, args, cores=0, waits="poll"):
    """Run the skeleton on `ranks` simulated hosts; {phase: per-rank ns array}. With
    `cores`, the ranks shared one machine of that many cores when measured: its disk,
    which every node's aggregator writes through, and its cores. Where ranks outnumber
    them the aggregators' writes, which every rank makes at once, go at cores/ranks of
    a core; and where the waiting ranks poll (`waits`), they slow rank 0's own work
    too: what runs natively in the skeleton (the book), the copies (shared_cores),
    rank 0's dealing and its percentile selection. Ranks that yield leave those alone."""
    speed = max(1.0, ranks / cores) if cores else 1.0
    if cores:
        args = dict(args, **{"shared-disk": 1})
    polled = speed > 1 and waits == "poll"
    slowed = ("copy-ns", "gather-ns", "write-ns-per-byte") if polled else \
        ("write-ns-per-byte",)
    if speed > 1:
        args = dict(args, **{k: args[k] * speed for k in slowed})
    if polled:
        platform = shared_cores(platform, speed)
        args = dict(args, **{"native-slowdown": speed})
    with tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False) as h:
        h.write("".join(f"node-{i}\n" for i in range(ranks)))
    # The skeleton keeps no mutable globals, so SMPI need not privatize them (faster).
    # MPI_Reduce as a binomial tree, as Open MPI reduces small messages: SMPI's default
    # reduce took 96 s for 20 reductions over 512 ranks here (binomial: 0.7 s), which
    # made a 1,024-rank point take 5 minutes instead of 3 s. SMPI does not time the
    # bursts between MPI calls: the skeleton times its native work itself (at 256
    # ranks SMPI's timing made a 1.4 ms write 202 ms, from the simulator's own costs).
    cmd = ["smpirun", "-no-privatize", "-np", str(ranks), "-platform", platform,
           "-hostfile", h.name, "--cfg=smpi/simulate-computation:no",
           "--cfg=smpi/bw-factor:0:1", "--cfg=smpi/lat-factor:0:1",
           "--cfg=smpi/reduce:binomial", "--log=root.thres:critical", skeleton]
    for k, v in args.items():
        cmd += [f"--{k}", str(v)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except subprocess.CalledProcessError as e:
        sys.exit(f"predict.py: the simulation failed: {e.stderr.strip()[-500:]}")
    finally:
        os.unlink(h.name)
        if polled:
            os.unlink(platform)
    ph = {}
    for line in out.splitlines():
        if line.startswith("phase_ns "):
            name, vals = line[len("phase_ns "):].split("=")
            ph[name] = np.array([float(v) for v in vals.split(",")])
    return ph


def group_of(path, by):
    """What a run is grouped by in the validation: its ranks, or its nodes (a Slurm
    run's allocation; one simulated host per rank whatever the placement, which the
    skeleton takes from the file's ranks per node)."""
    with h5py.File(path, "r") as f:
        return int(f.attrs[by])


def validate(a):
    """Each run predicted from its own work and the reference's rates; runs of the same
    rank (or node) count compared as medians, measured against predicted, since one run on a
    shared machine is noisy."""
    refs = [reference(r) for r in a.reference]
    rates = {k: float(np.median([r[k] for r in refs])) for k in refs[0]}
    groups = {}
    for path in a.runs:
        args, ranks, measured = calibrate(path, rates)
        predicted = summary(simulate(a.skeleton, a.platform, ranks, args, a.cores,
                                     a.waits))
        groups.setdefault(group_of(path, a.by), []).append((measured, predicted))
    platform = os.path.basename(a.platform)
    print(f"Validation on {platform}: measured against predicted, medians over runs")
    print(f"| {a.by} | runs | figure | measured (s) | predicted (s) | error | bound |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for group, pairs in sorted(groups.items()):
        for k in ["makespan"] + MODELLED:
            m = float(np.median([x[0][k] for x in pairs]))
            p = float(np.median([x[1][k] for x in pairs]))
            err = p / m - 1 if m else 0.0
            bound = TOLERANCE.get(k)
            bad = bound is not None and abs(err) > bound and abs(p - m) > ABSOLUTE_S
            print(f"| {group} | {len(pairs)} | {k} | {m:.6f} | {p:.6f} | {err:+.1%} | "
                  f"{f'{bound:.0%} or 1 ms' if bound else '-'}{' FAIL' if bad else ''} |")
            rows.append(["validation", platform, a.by, group, len(pairs), k, f"{m:.6g}",
                         f"{p:.6g}", f"{err:.4f}", bound if bound else "",
                         "" if bound is None else ("no" if bad else "yes")])
    if a.csv:
        write_validation(a.csv, rows)
    return 1 if any(r[-1] == "no" for r in rows) else 0


VALIDATION_COLUMNS = ["kind", "platform", "by", "count", "runs", "figure", "measured_s",
                      "predicted_s", "error", "bound", "within"]


def write_validation(path, rows):
    """The validation's rows as a CSV whose every row says validation, each value named
    measured or predicted, for loomdist-report --validation."""
    import csv
    with open(path, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(VALIDATION_COLUMNS)
        w.writerows(rows)


def pingpong(path):
    """(latency s, bandwidth B/s) of one loomdist-pingpong output."""
    words = open(path).read().split()
    try:
        return float(words[words.index("latency_s") + 1]), \
            float(words[words.index("bandwidth_Bps") + 1])
    except (ValueError, IndexError):
        sys.exit(f"predict.py: {path} is not loomdist-pingpong output")


def cpu_model():
    """This machine's CPU, as /proc/cpuinfo names it."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def platform(a):
    """The template with the median measured latency (half on each of a route's two
    links) and bandwidth (on every link and the backbone) in place of its own, and
    its `Calibrated:` line saying where and from what."""
    runs = [pingpong(p) for p in a.pingpong]
    lat = float(np.median([r[0] for r in runs]))
    bw = float(np.median([r[1] for r in runs]))
    text = open(a.template).read()
    for attr, v in [("bw", f"{bw / 1e9:.3g}GBps"), ("bb_bw", f"{bw / 1e9:.3g}GBps"),
                    ("loopback_bw", f"{bw / 1e9:.3g}GBps"),
                    ("lat", f"{lat / 2 * 1e6:.3g}us"),
                    ("loopback_lat", f"{lat / 2 * 1e6:.3g}us")]:
        text, n = re.subn(rf'(\s{attr})="[^"]*"', rf'\1="{v}"', text)
        if n != 1:
            sys.exit(f"predict.py: {a.template} has no single {attr} to calibrate")
    line = (f"Calibrated: {cpu_model()}, {len(runs)} loomdist-pingpong runs, medians: "
            f"latency {lat * 1e6:.3g} us one way, bandwidth {bw / 1e9:.3g} GB/s")
    text, n = re.subn(r"Calibrated:[^\n]*", line, text)
    if n != 1:
        sys.exit(f"predict.py: {a.template} has no 'Calibrated:' line")
    sys.stdout.write(text)
    return 0


SCENARIOS = [("strong-8000", lambda n: 8000), ("strong-8000000", lambda n: 8000000),
             ("weak-8000-per-rank", lambda n: 8000 * n)]
NODES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]


def sweep(a):
    """Every scenario, partition and node count, each calibration run's job, simulated
    on the platform with one rank per node; one CSV row each, marked predicted."""
    import csv
    nodes = [int(n) for n in a.nodes.split(",")] if a.nodes else NODES
    with open(a.out, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["kind", "platform", "calibration", "job", "scenario", "partition",
                    "nodes", "trades", "makespan_s"] + [f"{p}_s" for p in MODELLED])
        refs = [reference(r) for r in a.reference]
        rates = {k: float(np.median([r[k] for r in refs])) for k in refs[0]}
        for cal in a.calibration:
            args, _, _ = calibrate(cal, rates)
            with h5py.File(cal, "r") as f:
                job = f.attrs["jobs"]
            args["ranks-per-node"] = 1
            for name, trades in SCENARIOS:
                if a.scenarios and name not in a.scenarios.split(","):
                    continue
                for part in a.partitions.split(","):
                    for n in nodes:
                        run = dict(args, trades=trades(n), partition=part)
                        got = summary(simulate(a.skeleton, a.platform, n, run,
                                               a.cores, a.waits))
                        w.writerow(["predicted", os.path.basename(a.platform),
                                    os.path.basename(cal), job, name, part, n,
                                    trades(n), f"{got['makespan']:.6g}"] +
                                   [f"{got[p]:.6g}" for p in MODELLED])
                        out.flush()
    return 0


def shared_machine(parser):
    """--cores and --waits: the ranks share one machine (an emulated cluster), as
    simulate() models it."""
    parser.add_argument("--cores", type=int, default=0,
                        help="cores of the one machine the ranks share (its disk too), "
                        "else 0")
    parser.add_argument("--waits", choices=["poll", "yield"], default="poll",
                        help="how the ranks wait, where they outnumber --cores: polling, "
                        "or yielding their core (Open MPI's mpi_yield_when_idle)")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("validate")
    v.add_argument("--skeleton", required=True)
    v.add_argument("--platform", required=True)
    v.add_argument("--reference", required=True, action="append",
                   help="a one-rank run (again for more: their median rates)")
    shared_machine(v)
    v.add_argument("--by", choices=["ranks", "nodes"], default="ranks",
                   help="group the runs by their ranks (default) or their nodes")
    v.add_argument("--csv", help="also write the table as a CSV, for loomdist-report "
                   "--validation")
    v.add_argument("runs", nargs="+")
    w = sub.add_parser("sweep")
    w.add_argument("--skeleton", required=True)
    w.add_argument("--platform", required=True)
    w.add_argument("--calibration", required=True, action="append",
                   help="a one-rank run of one job (again for another job)")
    w.add_argument("--reference", required=True, action="append",
                   help="a one-rank run for the gather and write rates (again: median)")
    w.add_argument("--nodes", help="comma-separated node counts (default 1..1024)")
    w.add_argument("--partitions", default="block,cyclic,ranges")
    w.add_argument("--scenarios", help="comma-separated, of " +
                   ", ".join(n for n, _ in SCENARIOS) + " (default all)")
    w.add_argument("--out", required=True)
    shared_machine(w)
    c = sub.add_parser("platform")
    c.add_argument("--template", required=True)
    c.add_argument("pingpong", nargs="+", help="loomdist-pingpong outputs, one each")
    a = p.parse_args()
    return {"validate": validate, "sweep": sweep, "platform": platform}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
