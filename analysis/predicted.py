"""The predicted section: SimGrid SMPI sweeps of loomdist's skeleton (sim/predict.py
sweep), never measured data. Every row read must say kind=predicted and name its
platform; every table and heading written says predicted and names the platform, and
its CSV (tables/predicted.csv) is a file of its own, apart from the measured tables.

Beside each predicted series go the measured runs that are comparable with it: those
with the options and strategies of the sweep's calibration run (which must be among
the report's inputs), its partition and its trades at their node count, one rank per
node as the platform has. They are drawn with markers of their own, labelled measured,
and tabled in tables/measured_beside_sweeps.csv, never in predicted.csv."""
import csv
import os

import numpy as np

from .figures import plt

PHASES = ["book", "scatter", "prepare", "strategies", "gather", "write"]
OVERHEADS = [("partition", "book"), ("scatter", "scatter"), ("gather", "gather"),
             ("write", "write")]
COLUMNS = ["kind", "platform", "job", "scenario", "partition", "nodes", "trades",
           "makespan_s", "speedup", "efficiency", "partition_share", "scatter_share",
           "gather_share", "write_share"]
MEASURED_COLUMNS = ["kind", "cpu_model", "job", "strategies", "scenario", "partition",
                    "nodes", "trades", "runs", "makespan_s", "speedup", "efficiency",
                    "partition_share", "scatter_share", "gather_share", "write_share"]
# Options that a sweep varies, and so never keep a measured run from its series.
SWEPT = ("trades", "partition")


def load(paths):
    """The rows of the given sweep CSVs; a row not marked predicted is refused."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("kind") != "predicted" or not row.get("platform"):
                    raise ValueError(f"{path}: a row is not marked predicted with its "
                                     "platform; only sim/predict.py sweep output is read")
                rows.append(row)
    return rows


def _series(rows):
    """{(platform, job, scenario, partition): rows by node count}."""
    out = {}
    for r in rows:
        key = (r["platform"], r["job"], r["scenario"], r["partition"])
        out.setdefault(key, []).append(r)
    return {k: sorted(v, key=lambda r: int(r["nodes"])) for k, v in out.items()}


def _derived(series, scenario):
    """Per point: speedup and efficiency against the smallest node count, and the share
    of the makespan in each overhead. Weak scaling's efficiency is T(1)/T(N)."""
    base = series[0]
    t1, n1 = float(base["makespan_s"]), int(base["nodes"])
    out = []
    for r in series:
        t, n = float(r["makespan_s"]), int(r["nodes"])
        weak = scenario.startswith("weak")
        speedup = t1 / t * (n / n1 if weak else 1)
        d = {"nodes": n, "trades": int(r["trades"]), "makespan_s": t,
             "speedup": speedup, "efficiency": speedup / (n / n1)}
        work = float(r["prepare_s"]) + float(r["strategies_s"])
        for name, phase in OVERHEADS:
            d[f"{name}_share"] = float(r[f"{phase}_s"]) / t if t else 0.0
        d["work_share"] = work / t if t else 0.0
        out.append(d)
    return out


def _phases_s(phases):
    """A measured run's makespan and phases in s, as sim/predict.py sums the skeleton's:
    the slowest rank's sum from the book to the file closed, each phase's slowest rank."""
    total = sum(phases[p] for p in PHASES)
    out = {"makespan_s": float(total.max()) / 1e9}
    out.update({f"{p}_s": float(phases[p].max()) / 1e9 for p in PHASES})
    return out


def _comparable(run, job):
    """What a measured run must share with a sweep's calibration run: every option its
    job's results depend on but those the sweep varies, the CPU, and the strategies."""
    key = tuple((n, v) for n, v in run.experiment_key(job) if n not in SWEPT)
    return key, tuple(sorted(s for j, s in run.strategies if j == job))


def _trades_at(series, nodes):
    """The trades a series has at a node count it may not hold: the same at every
    count (strong scaling), or the same per node (weak)."""
    counts = {int(r["trades"]) for r in series}
    if len(counts) == 1:
        return counts.pop()
    per_node = {int(r["trades"]) // int(r["nodes"]) for r in series}
    return per_node.pop() * nodes if len(per_node) == 1 else None


def _runs_job(run, job):
    """Whether the run ran the job."""
    return any(j == job for j, _ in run.strategies)


def _measured(runs, series, job, partition):
    """The sweep's calibration run and the measured points beside one predicted series,
    as rows like the sweep's, with `runs` (how many at that node count; the medians are
    theirs). None when the calibration run is not among the runs, or more than one
    input has its name, so that no run can be matched to it."""
    calibration = series[0].get("calibration", "")
    cal = [r for r in runs if os.path.basename(r.path) == calibration and _runs_job(r, job)]
    if len(cal) != 1:
        return None
    want = _comparable(cal[0], job)
    by_nodes = {}
    for r in runs:
        beside = (r.phases is not None and r.ranks == r.nodes and _runs_job(r, job) and
                  r.options.get("partition", "block") == partition and
                  r.trades == _trades_at(series, r.nodes) and _comparable(r, job) == want)
        if beside:
            by_nodes.setdefault(r.nodes, []).append(_phases_s(r.phases))
    points = [dict({k: float(np.median([m[k] for m in ms])) for k in ms[0]},
                   nodes=n, trades=_trades_at(series, n), runs=len(ms))
              for n, ms in sorted(by_nodes.items())]
    return cal[0], points


def _dominates(points):
    """{overhead: the first node count where it takes more of the makespan than the
    per-rank work (prepare and strategies), or None}."""
    return {name: next((p["nodes"] for p in points if p[f"{name}_share"] > p["work_share"]),
                       None) for name, _ in OVERHEADS}


def _draw(axes, points, label, line, marker, colour=None):
    """One series on the figure's three axes: its speedup, its efficiency, and each
    overhead's share of the makespan in that overhead's colour."""
    nodes = [p["nodes"] for p in points]
    for ax, key in zip(axes, ("speedup", "efficiency")):
        ax.plot(nodes, [p[key] for p in points], linestyle=line, marker=marker,
                color=colour, label=label)
    for c, (over, _) in enumerate(OVERHEADS):
        axes[2].plot(nodes, [100 * p[f"{over}_share"] for p in points], linestyle=line,
                     marker=marker, color=f"C{c}", label=f"{over} ({label})")


def _figure(figure_dir, platform, job, scenario, by_partition, measured):
    """One figure per job and scenario, every partition a line: speedup, efficiency and
    each overhead's share of the makespan against the node count, titled predicted;
    measured points, where there are any, as black crosses (shares: crosses of the
    overhead's colour), labelled measured. Returns its file name."""
    name = f"predicted_{platform.rsplit('.', 1)[0]}_{job}_{scenario}.png"
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    styles = ["solid", "dashed", "dotted", "dashdot"]
    for k, (part, points) in enumerate(sorted(by_partition.items())):
        _draw(axes, points, f"predicted, {part}", styles[k % len(styles)], "o")
    for part, points in sorted(measured.items()):
        _draw(axes, points, f"measured, {part}", "none", "x", "black")
    for ax, label in zip(axes, ["speedup", "efficiency", "share of makespan (%)"]):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log", base=2)
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    axes[2].legend(fontsize=6, ncol=2)
    fig.suptitle(f"PREDICTED (lines): SimGrid SMPI on {platform}, {job}, {scenario}" +
                 ("; MEASURED (crosses): the comparable runs" if measured else ""))
    fig.tight_layout()
    fig.savefig(os.path.join(figure_dir, name), dpi=110)
    plt.close(fig)
    return name


def _predicted_table(md_table, platform, job, scenario, part, points):
    """A predicted series' heading, table and the node count where each overhead
    begins to dominate, as markdown lines."""
    md = [f"### Predicted on {platform}: {job}, {scenario}, {part} partition", ""]
    md.append(md_table(["nodes", "trades", "predicted makespan (s)", "speedup",
                        "efficiency", "partition", "scatter", "gather", "write"],
                       [[p["nodes"], p["trades"], f"{p['makespan_s']:.4g}",
                         f"{p['speedup']:.2f}", f"{p['efficiency']:.2f}"] +
                        [f"{100 * p[f'{n}_share']:.1f}%" for n, _ in OVERHEADS]
                        for p in points]))
    said = [f"{n} from {v} nodes" for n, v in _dominates(points).items() if v is not None]
    md += ["", f"Predicted on {platform}, the first node count where an overhead "
           "takes more of the makespan than the per-rank work: "
           + (", ".join(said) if said else "none") + f" (up to {points[-1]['nodes']} "
           "nodes).", ""]
    return md


def _measured_table(md_table, calibration, found, points):
    """The measured points beside a predicted series, or why there are none, as
    markdown lines."""
    if found is None:
        return [f"No measured points beside it: its calibration run `{calibration}` is "
                "not among the report's inputs (or more than one input has that name), "
                "so no run can be matched to it.", ""]
    if not points:
        return [f"No measured run is comparable with its calibration run `{calibration}` "
                "(its options and strategies, one rank per node, these trades).", ""]
    cpu = found.cpu.get("cpu_model") or "an unnamed CPU"
    return [f"Measured, not predicted, beside it: the runs comparable with its "
            f"calibration run `{calibration}` (its options and strategies, one rank per "
            f"node, these trades), on {cpu}; medians at each node count:", "",
            md_table(["nodes", "trades", "runs", "measured makespan (s)", "speedup",
                      "efficiency", "partition", "scatter", "gather", "write"],
                     [[p["nodes"], p["trades"], p["runs"], f"{p['makespan_s']:.4g}",
                       f"{p['speedup']:.2f}", f"{p['efficiency']:.2f}"] +
                      [f"{100 * p[f'{n}_share']:.1f}%" for n, _ in OVERHEADS]
                      for p in points]), ""]


def _csv_values(p, runs=False):
    """A point's values for its CSV row, from the node count on."""
    return ([p["nodes"], p["trades"]] + ([p["runs"]] if runs else []) +
            [p["makespan_s"], p["speedup"], p["efficiency"]] +
            [p[f"{n}_share"] for n, _ in OVERHEADS])


def section(rows, md_table, figure_dir=None, runs=()):
    """The report's predicted section, as markdown lines, its CSV rows and those of the
    measured points beside it (each list apart); with figure_dir, a figure per job and
    scenario there."""
    if not rows:
        return [], [], []
    md = ["## Predicted, not measured (SimGrid SMPI simulation)", "",
          "Simulated by `sim/predict.py sweep` with loomdist's skeleton: per-rank work "
          "from real one-rank runs, the book, scatter, gathers and write simulated on the "
          "platform named. Nothing in this section was measured at these node counts; "
          "measured runs that are comparable stand beside it, in tables and markers of "
          "their own, labelled measured.", ""]
    csv_rows, measured_rows, figures = [], [], {}
    for (platform, job, scenario, part), series in sorted(_series(rows).items()):
        points = _derived(series, scenario)
        figures.setdefault((platform, job, scenario), ({}, {}))[0][part] = points
        md += _predicted_table(md_table, platform, job, scenario, part, points)
        found, measured = _measured(runs, series, job, part) or (None, [])
        seen = [dict(p, runs=m["runs"]) for p, m in
                zip(_derived(measured, scenario) if measured else [], measured)]
        md += _measured_table(md_table, series[0].get("calibration", ""), found, seen)
        if seen:
            figures[(platform, job, scenario)][1][part] = seen
        head = [platform, job, scenario, part]
        csv_rows += [dict(zip(COLUMNS, ["predicted"] + head + _csv_values(p)))
                     for p in points]
        head = [found.cpu.get("cpu_model", ""), job,
                "+".join(_comparable(found, job)[1]), scenario, part] if seen else []
        measured_rows += [dict(zip(MEASURED_COLUMNS, ["measured"] + head +
                                   _csv_values(p, runs=True))) for p in seen]
    for (platform, job, scenario), (parts, seen) in sorted(figures.items()) \
            if figure_dir else ():
        name = _figure(figure_dir, platform, job, scenario, parts, seen)
        md += [f"![Predicted on {platform}: {job}, {scenario}](figures/{name})", ""]
    return md, csv_rows, measured_rows
