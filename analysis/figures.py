"""The report's figures, drawn with matplotlib's Agg backend so they render headless,
on a cluster login node or in CI, with no display.

Each function draws one figure for one experiment and returns the file name it wrote
and a caption, or None when the experiment holds nothing to draw.
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib import ticker  # noqa: E402
import numpy as np  # noqa: E402

from . import tables  # noqa: E402

# A log axis helps once values span this factor; below it, it only hides the scale.
LOG_SPAN = 8.0
DPI = 110
LINE_STYLES = ("-", "--", ":", "-.")


def _plain(value, _position):
    """Tick labels as plain numbers (4, 1000), not powers (2^2, 10^3)."""
    return f"{value:g}"


def _value_axis(ax, which, values):
    """Log-scale a measured axis when its values span enough to need it, with ticks at
    1, 2 and 5 of each decade so the values can still be read off."""
    values = [v for v in values if v > 0]
    if not values or max(values) / min(values) < LOG_SPAN:
        return
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(_plain))
    axis.set_minor_formatter(ticker.NullFormatter())


def _count_axis(ax, values):
    """An x axis of rank or node counts: ticks at exactly the counts that ran, on a
    base-2 log scale when they double, as sweeps usually do."""
    counts = sorted(set(values))
    if counts[-1] / counts[0] >= 4:
        ax.set_xscale("log", base=2)
    ax.set_xticks(counts)
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(_plain))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


def _save(fig, folder, name):
    """Write the figure as a PNG and free it: a sweep can make many."""
    path = os.path.join(folder, name)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return name


def _largest_per_node_count(points):
    """(nodes, throughput) of the layout with the most ranks at each node count."""
    best = {}
    for ranks, nodes, value in points:
        if ranks >= best.get(nodes, (0, 0.0))[0]:
            best[nodes] = (ranks, value)
    return [(nodes, best[nodes][1]) for nodes in sorted(best)]


def _plot_strategy(by_ranks, by_nodes, strategy, colour, points, style):
    """One strategy's lines: against ranks, one per node count; against nodes, one."""
    label = strategy
    for nodes in sorted(style):
        line = [(r, t) for r, n, t in points if n == nodes]
        if line:
            by_ranks.plot(*zip(*line), style[nodes], color=colour, marker="o", label=label)
            label = None
    by_nodes.plot(*zip(*_largest_per_node_count(points)), "-", color=colour, marker="o",
                  label=strategy)


def throughput(experiment, job, folder, prefix):
    """Throughput against rank count and node count, one colour per strategy and one
    line style per node count. Against nodes, each node count shows its largest
    layout, the one a user would run there."""
    fig, (by_ranks, by_nodes) = plt.subplots(1, 2, figsize=(10, 4))
    node_counts = sorted({c.nodes for c in experiment.configs})
    style = {n: LINE_STYLES[i % len(LINE_STYLES)] for i, n in enumerate(node_counts)}
    drawn = []
    for index, strategy in enumerate(experiment.strategies(job)):
        points = [(c.ranks, c.nodes, c.summaries[(job, strategy)].throughput[0])
                  for c in experiment.configs if (job, strategy) in c.summaries]
        if points:
            _plot_strategy(by_ranks, by_nodes, strategy, f"C{index % 10}", points, style)
            drawn.extend(t for _, _, t in points)
    if not drawn:
        plt.close(fig)
        return None
    if len(node_counts) > 1:
        for nodes in node_counts:
            by_ranks.plot([], [], style[nodes], color="grey",
                          label=f"{nodes} node{'s' if nodes != 1 else ''}")
    for ax, what, values in ((by_ranks, "MPI ranks", [c.ranks for c in experiment.configs]),
                             (by_nodes, "nodes (largest layout at each)",
                              [c.nodes for c in experiment.configs])):
        ax.set_xlabel(what)
        ax.set_ylabel("throughput (ops/s)")
        _count_axis(ax, values)
        _value_axis(ax, "y", drawn)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    by_ranks.set_title(f"{job}: throughput against ranks")
    by_nodes.set_title(f"{job}: throughput against nodes")
    name = _save(fig, folder, f"{prefix}throughput_{job}.png")
    return name, f"{experiment.label} {job}: throughput against ranks and nodes"


def latency_cdf(experiment, folder, prefix):
    """The distribution of per-trade settle latency (queueing included), which shows
    what a mean hides: a pool's waves of waiting trades, or a pinned tail."""
    config = experiment.largest("settle")
    if config is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    spans = []
    for strategy in experiment.strategies("settle"):
        s = config.summaries.get(("settle", strategy))
        if s is None or s.latency_ns is None or s.latency_ns.size == 0:
            continue
        ms = np.sort(s.latency_ns) / 1e6
        ax.step(ms, np.arange(1, ms.size + 1) / ms.size, where="post", label=strategy)
        spans.extend([ms[0], ms[-1]])
    if not spans:
        plt.close(fig)
        return None
    critical = max(s.critical_path_ns for (j, _), s in config.summaries.items()
                   if j == "settle")
    if critical > 0:
        ax.axvline(critical / 1e6, color="grey", linestyle=":", label="critical path")
    _value_axis(ax, "x", spans)
    ax.set_xlabel("latency from strategy start to settlement (ms)")
    ax.set_ylabel("fraction of trades settled")
    ax.set_title(f"settle latency CDF, {config.label}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    name = _save(fig, folder, f"{prefix}settle_latency_cdf.png")
    return name, f"{experiment.label} settle: latency CDF per strategy on {config.label}"


def var_strong_scaling(experiment, folder, prefix):
    """VaR speedup against ranks beside the ideal linear line, so the gap to ideal, and
    where it opens, is plain to see."""
    series = tables.strong_series(experiment)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ranks = []
    for strategy in experiment.strategies("var"):
        rows = tables.scaling_rows(series[0], "var", strategy)
        if rows:
            ax.plot([r["ranks"] for r in rows], [r["speedup"] for r in rows], "-", marker="o",
                    label=strategy)
            ranks.extend(r["ranks"] for r in rows)
    if not ranks:
        plt.close(fig)
        return None
    low, high = min(ranks), max(ranks)
    counts = sorted(set(ranks))
    ax.plot(counts, [r / low for r in counts], "k:", label="ideal")
    _count_axis(ax, ranks)
    _value_axis(ax, "y", [1.0, high / low])
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel(f"speedup over {low} rank{'s' if low != 1 else ''}")
    ax.set_title(f"VaR strong scaling, {experiment.trades} trades")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    name = _save(fig, folder, f"{prefix}var_strong_scaling.png")
    return name, f"{experiment.label} var: strong-scaling speedup against the ideal line"


def resources(experiment, job, folder, prefix):
    """Peak OS threads and memory per strategy on the largest layout, with the 99.9%
    interval where there were iterations enough, as the seed tables' last columns."""
    config = experiment.largest(job)
    if config is None:
        return None
    names = [s for s in experiment.strategies(job) if (job, s) in config.summaries]
    summaries = [config.summaries[(job, s)] for s in names]
    fig, (threads_ax, memory_ax) = plt.subplots(1, 2, figsize=(10, 4))
    for ax, field, label in ((threads_ax, "peak_threads", "peak OS threads (all ranks)"),
                             (memory_ax, "memory_mib", "peak memory, MiB (all ranks)")):
        means = [getattr(s, field)[0] for s in summaries]
        errors = [getattr(s, field)[1] or 0.0 for s in summaries]
        ax.bar(names, means, yerr=errors, capsize=4, color="tab:blue")
        _value_axis(ax, "y", means)
        ax.set_ylabel(label)
        ax.tick_params(axis="x", rotation=20)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.suptitle(f"{job}: OS threads and memory, {config.label}")
    name = _save(fig, folder, f"{prefix}resources_{job}.png")
    return name, (f"{experiment.label} {job}: peak OS threads and memory per strategy on "
                  f"{config.label}")


def draw_all(experiment, folder, prefix):
    """Every figure the experiment's data supports, as (file name, caption)."""
    os.makedirs(folder, exist_ok=True)
    drawn = []
    for job in experiment.jobs():
        drawn.append(throughput(experiment, job, folder, prefix))
    if "settle" in experiment.jobs():
        drawn.append(latency_cdf(experiment, folder, prefix))
    if "var" in experiment.jobs():
        drawn.append(var_strong_scaling(experiment, folder, prefix))
    for job in experiment.jobs():
        drawn.append(resources(experiment, job, folder, prefix))
    return [d for d in drawn if d is not None]
