"""The validation section: sim/predict.py validate's tables (its --csv), the skeleton's
predictions beside the runs they predict, at the rank or node counts that were run.
Every row read must say kind=validation; every table and figure names which figure is
measured and which predicted, and what bound each was held to."""
import csv
import os

from .figures import plt

COLUMNS = ["kind", "platform", "by", "count", "runs", "figure", "measured_s",
           "predicted_s", "error", "bound", "within"]
BOUNDED = ["makespan", "scatter", "gather"]


def load(paths):
    """The rows of the given validation CSVs; a file without the columns, or a row not
    marked validation, is refused."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: no {', '.join(missing)} column; only "
                                 "sim/predict.py validate --csv output is read")
            for row in reader:
                if row["kind"] != "validation":
                    raise ValueError(f"{path}: a row is not marked validation")
                rows.append(row)
    return rows


def _tables(rows):
    """{(platform, by): rows in count order, each count's figures in the CSV's order}."""
    out = {}
    for r in rows:
        out.setdefault((r["platform"], r["by"]), []).append(r)
    return {k: sorted(v, key=lambda r: int(r["count"])) for k, v in out.items()}


def _figure(figure_dir, platform, by, rows):
    """Measured (crosses) and predicted (circles) makespan, scatter and gather against
    the count. Returns the figure's file name."""
    name = f"validation_{platform.rsplit('.', 1)[0]}_{by}.png"
    fig, axes = plt.subplots(1, len(BOUNDED), figsize=(13, 3.6))
    for ax, figure in zip(axes, BOUNDED):
        these = [r for r in rows if r["figure"] == figure]
        counts = [int(r["count"]) for r in these]
        ax.plot(counts, [1e3 * float(r["measured_s"]) for r in these], "kx", ms=9,
                label="measured")
        ax.plot(counts, [1e3 * float(r["predicted_s"]) for r in these], "o",
                fillstyle="none", label="predicted")
        ax.set_xlabel(by)
        ax.set_ylabel(f"{figure} (ms)")
        ax.set_xticks(sorted(set(counts)))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Validation on {platform}: MEASURED (crosses) and PREDICTED (circles), "
                 "medians over runs")
    fig.tight_layout()
    fig.savefig(os.path.join(figure_dir, name), dpi=110)
    plt.close(fig)
    return name


def section(rows, md_table, figure_dir=None):
    """The report's validation section as markdown lines, with a figure per platform
    in figure_dir."""
    if not rows:
        return []
    md = ["## Predicted against measured: the skeleton's validation", "",
          "Each run was predicted by `sim/predict.py validate` from its own per-rank "
          "work and a one-rank run's rates; medians over the runs at each count. The "
          "bounds: the makespan within 10%, the scatter and the gather within 25%, or "
          "within 1 ms, since a relative bound means nothing for microseconds.", ""]
    for (platform, by), these in sorted(_tables(rows).items()):
        bounded = [r for r in these if r["within"]]
        held = sum(r["within"] == "yes" for r in bounded)
        md += [f"### Validation on {platform}, by {by}", "",
               md_table([by, "runs", "figure", "measured (ms)", "predicted (ms)",
                         "error", "bound", "within"],
                        [[r["count"], r["runs"], r["figure"],
                          f"{1e3 * float(r['measured_s']):.3f}",
                          f"{1e3 * float(r['predicted_s']):.3f}",
                          f"{100 * float(r['error']):+.1f}%",
                          f"{100 * float(r['bound']):.0f}%" if r["bound"] else "-",
                          r["within"] or "-"] for r in these]),
               "", f"{held} of {len(bounded)} bounded figures within their bound.", ""]
        if figure_dir:
            name = _figure(figure_dir, platform, by, these)
            md += [f"![Validation on {platform}, by {by}](figures/{name})", ""]
    return md
