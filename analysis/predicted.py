"""The predicted section: SimGrid SMPI sweeps of loomdist's skeleton (sim/predict.py
sweep), never measured data. Every row read must say kind=predicted and name its
platform; every table and heading written says predicted and names the platform, and
its CSV (tables/predicted.csv) is a file of its own, apart from the measured tables."""
import csv

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


def section(rows, md_table):
    """The report's predicted section, as markdown lines, and its CSV rows."""
    if not rows:
        return [], []
    md = ["## Predicted, not measured (SimGrid SMPI simulation)", "",
          "Simulated by `sim/predict.py sweep` with loomdist's skeleton: per-rank work "
          "from real one-rank runs, the book, scatter, gathers and write simulated on the "
          "platform named. Nothing in this section was measured at these node counts.",
          ""]
    csv_rows = []
    for (platform, job, scenario, part), series in sorted(_series(rows).items()):
        points = _derived(series, scenario)
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
    return md, csv_rows
