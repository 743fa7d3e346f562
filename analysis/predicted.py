"""The predicted section: SimGrid SMPI sweeps of loomdist's skeleton (sim/predict.py
sweep), never measured data. Every row read must say kind=predicted and name its
platform; every table and heading written says predicted and names the platform, and
its CSV (tables/predicted.csv) is a file of its own, apart from the measured tables."""
import csv
import os

from .figures import plt

PHASES = ["book", "scatter", "prepare", "strategies", "gather", "write"]
OVERHEADS = [("partition", "book"), ("scatter", "scatter"), ("gather", "gather"),
             ("write", "write")]
COLUMNS = ["kind", "platform", "job", "scenario", "partition", "nodes", "trades",
           "makespan_s", "speedup", "efficiency", "partition_share", "scatter_share",
           "gather_share", "write_share"]


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


def _dominates(points):
    """{overhead: the first node count where it takes more of the makespan than the
    per-rank work (prepare and strategies), or None}."""
    return {name: next((p["nodes"] for p in points if p[f"{name}_share"] > p["work_share"]),
                       None) for name, _ in OVERHEADS}


def _figure(figure_dir, platform, job, scenario, by_partition):
    """One figure per job and scenario, every partition a line: speedup, efficiency and
    each overhead's share of the makespan against the node count, titled predicted.
    Returns its file name."""
    name = f"predicted_{platform.rsplit('.', 1)[0]}_{job}_{scenario}.png"
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    styles = ["-", "--", ":", "-."]
    for k, (part, points) in enumerate(sorted(by_partition.items())):
        nodes = [p["nodes"] for p in points]
        style = styles[k % len(styles)]
        axes[0].plot(nodes, [p["speedup"] for p in points], style, marker="o", label=part)
        axes[1].plot(nodes, [p["efficiency"] for p in points], style, marker="o",
                     label=part)
        for c, (over, _) in enumerate(OVERHEADS):
            axes[2].plot(nodes, [100 * p[f"{over}_share"] for p in points], style,
                         color=f"C{c}", label=f"{over} ({part})")
    for ax, label in zip(axes, ["predicted speedup", "predicted efficiency",
                                "predicted share of makespan (%)"]):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("nodes")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log", base=2)
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    axes[2].legend(fontsize=6, ncol=2)
    fig.suptitle(f"PREDICTED, not measured: SimGrid SMPI on {platform}, {job}, {scenario}")
    fig.tight_layout()
    fig.savefig(os.path.join(figure_dir, name), dpi=110)
    plt.close(fig)
    return name


def section(rows, md_table, figure_dir=None):
    """The report's predicted section, as markdown lines, and its CSV rows; with
    figure_dir, a figure per job and scenario there."""
    if not rows:
        return [], []
    md = ["## Predicted, not measured (SimGrid SMPI simulation)", "",
          "Simulated by `sim/predict.py sweep` with loomdist's skeleton: per-rank work "
          "from real one-rank runs, the book, scatter, gathers and write simulated on the "
          "platform named. Nothing in this section was measured at these node counts.",
          ""]
    csv_rows = []
    figures = {}
    for (platform, job, scenario, part), series in sorted(_series(rows).items()):
        points = _derived(series, scenario)
        figures.setdefault((platform, job, scenario), {})[part] = points
        md += [f"### Predicted on {platform}: {job}, {scenario}, {part} partition", ""]
        md.append(md_table(["nodes", "trades", "predicted makespan (s)", "speedup",
                        "efficiency", "partition", "scatter", "gather", "write"],
                       [[p["nodes"], p["trades"], f"{p['makespan_s']:.4g}",
                         f"{p['speedup']:.2f}", f"{p['efficiency']:.2f}"] +
                        [f"{100 * p[f'{n}_share']:.1f}%" for n, _ in OVERHEADS]
                        for p in points]))
        dom = _dominates(points)
        said = [f"{n} from {v} nodes" for n, v in dom.items() if v is not None]
        last = points[-1]["nodes"]
        md += ["", f"Predicted on {platform}, the first node count where an overhead "
               "takes more of the makespan than the per-rank work: "
               + (", ".join(said) if said else "none") + f" (up to {last} nodes).", ""]
        for p in points:
            csv_rows.append(dict(zip(COLUMNS, [
                "predicted", platform, job, scenario, part, p["nodes"], p["trades"],
                p["makespan_s"], p["speedup"], p["efficiency"]] +
                [p[f"{n}_share"] for n, _ in OVERHEADS])))
    for (platform, job, scenario), parts in sorted(figures.items()) if figure_dir else ():
        name = _figure(figure_dir, platform, job, scenario, parts)
        md += [f"![Predicted on {platform}: {job}, {scenario}](figures/{name})", ""]
    return md, csv_rows
