"""The four-model study's figure and table, from loomdist-forks' JMH JSON files.

Each JSON file is a list of benchmarks `loomdist.models.<model>`, with params tasks,
model and profile and JMH's primary metric. The figure has one panel per profile:
ops/s against tasks, one curve per model, each bar the score's 99.9% error
(scoreError) as JMH gives it, clipped at zero where a few iterations make it wider
than the score. The table lists each score with its error, count and forks.

Usage: analysis/loomdist-models FILE.json... [-o DIR]
"""
import json
import os
import sys

from . import command_line, figures

PROG = "loomdist-models"
FIGURE = "models_ops.png"
TABLE = "models.md"
# The models in the job's own order, so each keeps its colour in every figure.
MODELS = ("threads", "green", "stackless", "hybrid", "stackless-blocking")


class InputError(Exception):
    """A file that is no loomdist-forks JSON of the models job; one line."""


def load(paths):
    """Every models benchmark of the files: (profile, model, tasks) -> its object."""
    points = {}
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
            for b in doc:
                if not b["benchmark"].startswith("loomdist.models."):
                    continue
                p = b["params"]
                points[(p["profile"], p["model"], int(p["tasks"]))] = b
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise InputError(f"{path}: not a loomdist-forks JSON file ({err})") from err
    if not points:
        raise InputError("no loomdist.models benchmark in " + " ".join(paths))
    return points


def error_of(metric):
    """scoreError, with JMH's "NaN" (one sample) as no bar."""
    err = metric["scoreError"]
    return 0.0 if isinstance(err, str) else float(err)


def draw(points, folder):
    """One panel per profile: ops/s against tasks, a curve per model."""
    profiles = sorted({k[0] for k in points})
    fig, axes = figures.plt.subplots(1, len(profiles), figsize=(5.2 * len(profiles), 4.2),
                                     squeeze=False, sharey=True)
    scores = [b["primaryMetric"]["score"] for b in points.values()]
    for ax, profile in zip(axes[0], profiles):
        for index, model in enumerate(MODELS):
            mine = sorted((k[2], b) for k, b in points.items() if k[:2] == (profile, model))
            if not mine:
                continue
            xs = [t for t, _ in mine]
            ys = [b["primaryMetric"]["score"] for _, b in mine]
            errs = [error_of(b["primaryMetric"]) for _, b in mine]
            below = [min(e, y) for e, y in zip(errs, ys)]
            style = figures.strategy_style(index)
            ax.errorbar(xs, ys, yerr=[below, errs], color=style["color"],
                        linestyle=style["linestyle"], marker=style["marker"],
                        linewidth=style["linewidth"], capsize=4, label=model)
        tasks = sorted({k[2] for k in points if k[0] == profile})
        ax.set_xscale("log")
        ax.set_xticks(tasks)
        ax.xaxis.set_major_formatter(figures.ticker.FuncFormatter(figures._plain))
        ax.xaxis.set_minor_formatter(figures.ticker.NullFormatter())
        ax.set_title(f"profile {profile}")
        ax.set_xlabel("tasks per operation")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("ops/s (error: JMH's 99.9%)")
    figures._value_axis(axes[0][0], "y", scores)
    figures._legend_outside(axes[0][-1])
    return figures._save(fig, folder, FIGURE)


def table(points):
    """Markdown: a row per profile and load, a column per model."""
    models = [m for m in MODELS if any(k[1] == m for k in points)]
    lines = ["| profile | tasks | " + " | ".join(models) + " |",
             "|---|---|" + "---|" * len(models)]
    for profile, tasks in sorted({(k[0], k[2]) for k in points}):
        cells = []
        for m in models:
            b = points.get((profile, m, tasks))
            if b is None:
                cells.append("")
                continue
            pm = b["primaryMetric"]
            n = sum(len(r) for r in pm["rawData"])
            cells.append(f"{pm['score']:.3g} ± {error_of(pm):.2g} (n={n}, "
                         f"{b['forks']} forks)")
        lines.append(f"| {profile} | {tasks:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = command_line(PROG, "The four-model study's figure and table from "
                          "loomdist-forks --json files.", "[-o DIR] FILE.json...")
    parser.add_argument("paths", nargs="+", metavar="FILE.json")
    parser.add_argument("-o", "--output", default="models-report", metavar="DIR",
                        help="folder to write (default: models-report)")
    args = parser.parse_args(argv)
    try:
        points = load(args.paths)
    except InputError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    os.makedirs(args.output, exist_ok=True)
    name = draw(points, args.output)
    with open(os.path.join(args.output, TABLE), "w") as f:
        f.write(table(points))
    print(f"{PROG}: wrote {os.path.join(args.output, name)} and "
          f"{os.path.join(args.output, TABLE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
