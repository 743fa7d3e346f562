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
# Node counts in the throughput figure.
LINE_STYLES = ("-", "--", ":", "-.")
# Each strategy of a job gets its own colour, dash and marker, so that curves lying on
# one another (green, green-monitor and callbacks often do) all stay visible.
STRATEGY_DASHES = ("-", (0, (6, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)), (0, (3, 1, 1, 1, 1, 1)),
                   (0, (9, 3)))
STRATEGY_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def strategy_style(index):
    """Colour, dash, marker and width of the index-th strategy of a job: later ones are
    drawn thinner, on top, so a curve under another still shows at its edges."""
    return {"color": f"C{index % 10}", "linestyle": STRATEGY_DASHES[index % len(STRATEGY_DASHES)],
            "marker": STRATEGY_MARKERS[index % len(STRATEGY_MARKERS)],
            "linewidth": max(1.0, 3.0 - 0.45 * index)}


def spread(mean, low, high):
    """Error-bar lengths (below, above) for a mean from the smallest and largest value
    that occurred: a bar never reaches past what was measured, and so never below zero
    or above what can exist, as a mean ± t·s from three iterations can."""
    return max(0.0, mean - low), max(0.0, high - mean)


def _legend_outside(ax):
    """The legend to the right of the plot, where it can never cover a curve."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              frameon=False)


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


def _save(fig, folder, name, layout=True):
    """Write the figure as a PNG and free it: a sweep can make many."""
    path = os.path.join(folder, name)
    if layout:
        fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return name


def _largest_per_node_count(points):
    """(nodes, summary) of the layout with the most ranks at each node count."""
    best = {}
    for ranks, nodes, summary in points:
        if ranks >= best.get(nodes, (0, None))[0]:
            best[nodes] = (ranks, summary)
    return [(nodes, best[nodes][1]) for nodes in sorted(best)]


def _errorbar(ax, xs, summaries, style, dash, label, dodge):
    """Throughput means with bars from the slowest to the fastest iteration, each
    strategy nudged sideways by the factor dodge so that bars at one count do not hide
    one another."""
    xs = [x * dodge for x in xs]
    means = [s.throughput[0] for s in summaries]
    bars = np.array([spread(s.throughput[0], *s.throughput_range) for s in summaries]).T
    ax.errorbar(xs, means, yerr=bars, color=style["color"], linestyle=dash,
                marker=style["marker"], linewidth=style["linewidth"], markersize=6,
                capsize=4, label=label)


def _plot_strategy(by_ranks, by_nodes, strategy, style, points, dashes, dodge):
    """One strategy's lines: against ranks, one per node count; against nodes, one."""
    label = strategy
    for index, nodes in enumerate(sorted(dashes)):
        line = sorted(((r, s) for r, n, s in points if n == nodes), key=lambda p: p[0])
        if line:  # layouts of one rank count on more nodes sit a little further right
            _errorbar(by_ranks, [r for r, _ in line], [s for _, s in line], style,
                      dashes[nodes], label, dodge * 2.0 ** (0.05 * index))
            label = None
    best = _largest_per_node_count(points)
    _errorbar(by_nodes, [n for n, _ in best], [s for _, s in best], style, "-", strategy,
              dodge)


def throughput(experiment, job, folder, prefix):
    """Throughput against rank count and node count, one colour and marker per strategy
    and one line style per node count, on a linear axis from zero, with bars from the
    slowest to the fastest iteration. Against nodes, each node count shows its largest
    layout, the one a user would run there. The legend sits below the plots, off the
    data."""
    fig, (by_ranks, by_nodes) = plt.subplots(1, 2, figsize=(10, 4.6))
    node_counts = sorted({c.nodes for c in experiment.configs})
    dashes = {n: LINE_STYLES[i % len(LINE_STYLES)] for i, n in enumerate(node_counts)}
    drawn = []
    strategies = experiment.strategies(job)
    for index, strategy in enumerate(strategies):
        points = [(c.ranks, c.nodes, c.summaries[(job, strategy)])
                  for c in experiment.configs if (job, strategy) in c.summaries]
        dodge = 2.0 ** (0.03 * (index - (len(strategies) - 1) / 2))
        if points:
            _plot_strategy(by_ranks, by_nodes, strategy, strategy_style(index), points, dashes,
                           dodge)
            drawn.extend(s.throughput_range[1] for _, _, s in points)
    if not drawn:
        plt.close(fig)
        return None
    if len(node_counts) > 1:
        for nodes in node_counts:
            by_ranks.plot([], [], dashes[nodes], color="grey",
                          label=f"{nodes} node{'s' if nodes != 1 else ''}")
    for ax, what, values in ((by_ranks, "MPI ranks", [c.ranks for c in experiment.configs]),
                             (by_nodes, "nodes (largest layout at each)",
                              [c.nodes for c in experiment.configs])):
        ax.set_xlabel(what)
        ax.set_ylabel("throughput (ops/s)")
        _count_axis(ax, values)
        if len(set(values)) == 1:  # one count: give the lone points some room
            ax.set_xlim(values[0] * 0.5, values[0] * 1.5)
        ax.set_ylim(0, max(drawn) * 1.08)
        ax.yaxis.set_major_formatter(ticker.StrMethodFormatter("{x:,.0f}"))
        ax.grid(True, which="both", alpha=0.3)
    by_ranks.set_title(f"{job}: throughput against ranks")
    by_nodes.set_title(f"{job}: throughput against nodes")
    handles, labels = by_ranks.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    name = _save(fig, folder, f"{prefix}throughput_{job}.png", layout=False)
    return name, (f"{experiment.label} {job}: throughput against ranks and nodes; bars run "
                  f"from the slowest to the fastest iteration")


def latency_cdf(experiment, folder, prefix):
    """The distribution of per-trade settle latency (queueing included), which shows
    what a mean hides: a pool's waves of waiting trades, or a pinned tail. Each strategy
    has its own dash and markers, so curves that coincide stay visible."""
    config = experiment.largest("settle")
    if config is None:
        return None
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    spans, kept = [], set()
    for index, strategy in enumerate(experiment.strategies("settle")):
        s = config.summaries.get(("settle", strategy))
        if s is None or s.latency_ns is None or s.latency_ns.size == 0:
            continue
        ms = np.sort(s.latency_ns) / 1e6
        style = strategy_style(index)
        step = max(1, ms.size // 8)
        ax.step(ms, np.arange(1, ms.size + 1) / ms.size, where="post", label=strategy,
                color=style["color"], linestyle=style["linestyle"],
                linewidth=style["linewidth"], marker=style["marker"], markersize=6,
                markevery=(min(ms.size - 1, index * step // 5), step), fillstyle="none")
        spans.extend([ms[0], ms[-1]])
        kept.add(s.kept_text)
    if not spans:
        plt.close(fig)
        return None
    critical = max(s.critical_path_ns for (j, _), s in config.summaries.items()
                   if j == "settle")
    if critical > 0:
        ax.axvline(critical / 1e6, color="grey", linestyle=":", label="critical path")
    _value_axis(ax, "x", spans)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("latency from strategy start to settlement (ms)")
    ax.set_ylabel("fraction of trades settled")
    ax.set_title(f"settle latency CDF, {config.label}\nper-trade latencies of "
                 f"{'; '.join(sorted(kept))}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    _legend_outside(ax)
    name = _save(fig, folder, f"{prefix}settle_latency_cdf.png")
    return name, (f"{experiment.label} settle: latency CDF per strategy on {config.label}, "
                  f"per-trade latencies of {'; '.join(sorted(kept))}")


def var_strong_scaling(experiment, folder, prefix):
    """VaR speedup against ranks beside the ideal linear line, so the gap to ideal, and
    where it opens, is plain to see."""
    series = tables.strong_series(experiment)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ranks = []
    for index, strategy in enumerate(experiment.strategies("var")):
        rows = tables.scaling_rows(series[0], "var", strategy)
        if rows:
            ax.plot([r["ranks"] for r in rows], [r["speedup"] for r in rows], label=strategy,
                    markersize=6, **strategy_style(index))
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
    _legend_outside(ax)
    name = _save(fig, folder, f"{prefix}var_strong_scaling.png")
    return name, f"{experiment.label} var: strong-scaling speedup against the ideal line"


def resources(experiment, job, folder, prefix):
    """Peak OS threads of the highest single rank and memory summed over ranks, per
    strategy on the largest layout, as the seed tables' last columns. The bars mark the
    smallest and largest iteration: spreads that occurred, never one past what can
    exist."""
    config = experiment.largest(job)
    if config is None:
        return None
    names = [s for s in experiment.strategies(job) if (job, s) in config.summaries]
    summaries = [config.summaries[(job, s)] for s in names]
    fig, (threads_ax, memory_ax) = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, field, label in ((threads_ax, "peak_threads", "peak OS threads, highest rank"),
                             (memory_ax, "memory_mib", "peak memory, MiB (all ranks)")):
        means = [getattr(s, field)[0] for s in summaries]
        ranges = [getattr(s, f"{field}_range") for s in summaries]
        bars = np.array([spread(m, *r) for m, r in zip(means, ranges)]).T
        ax.bar(names, means, yerr=bars, capsize=4, color="tab:blue",
               error_kw={"ecolor": "black"})
        top = max(high for _, high in ranges)
        _value_axis(ax, "y", [v for r in ranges for v in r])
        if ax.get_yscale() == "log":  # counts start at 1: bars rise from there
            ax.set_ylim(1 if field == "peak_threads" else min(means) / 2, top * 2.0)
        else:
            ax.set_ylim(0, top * 1.12)
            if field == "peak_threads":  # a thread count has no halves
                ax.yaxis.set_major_locator(ticker.MaxNLocator(integer=True))
        ax.set_ylabel(label)
        ax.tick_params(axis="x", rotation=20)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        for x, (mean, (_, high)) in enumerate(zip(means, ranges)):
            ax.annotate(f"{mean:,.0f}" if mean >= 10 else f"{mean:.2g}", (x, high),
                        textcoords="offset points", xytext=(0, 4), ha="center", fontsize=8)
    fig.suptitle(f"{job}: OS threads and memory, {config.label} "
                 f"(whiskers: smallest to largest iteration)")
    name = _save(fig, folder, f"{prefix}resources_{job}.png")
    return name, (f"{experiment.label} {job}: peak OS threads (highest single rank) and "
                  f"memory (all ranks) per strategy on {config.label}; whiskers run from the "
                  f"smallest to the largest iteration")


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
