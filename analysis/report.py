"""Writing the report folder: report.md, figures/*.png and tables/*.csv.

The Markdown is what a user would otherwise assemble in a notebook: problems with the
inputs first, then the findings, then each experiment's tables and figures, then how
every number was computed.
"""
import datetime
import glob
import os

from . import figures, findings, load, predicted, stats, tables, validation
from .experiments import JOB_ORDER, STRATEGY_ORDER, option_names, order

CONFIDENCE_TEXT = f"{stats.CONFIDENCE * 100:g}%"


def number(value):
    """Round for reading: enough digits to compare strategies, no more."""
    if value is None:
        return "—"
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1 or size == 0:
        return f"{value:.2f}"
    return f"{value:.3g}"


def with_ci(pair):
    """'mean ± half-width', or the mean alone when fewer than three iterations give no
    interval."""
    mean, half = pair
    return number(mean) if half is None else f"{number(mean)} ± {number(half)}"


def count(value):
    """A count: a whole number as one, a mean of counts to one decimal."""
    if value is None:
        return "—"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def count_range(mean, low, high):
    """An exact count over iterations: the value when every iteration agrees, else the
    mean with the smallest and largest that occurred, which a t-interval from a few
    iterations would stretch past anything possible."""
    if low == high:
        return count(low)
    return f"{count(mean)} ({count(low)}–{count(high)})"


def md_table(headers, rows):
    """A GitHub-flavoured Markdown table; pipes in cells are escaped."""
    clean = lambda cell: str(cell).replace("|", "\\|")
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(clean(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _problems(problems):
    """The input problems, one line each, or a line saying there were none."""
    if not problems:
        return ["## Input problems", "", "None: every file was read in full.", ""]
    return ["## Input problems", "", "Each problem below is one line; the report is made "
            "from everything else.", ""] + [f"- {p}" for p in problems] + [""]


def _findings(judged):
    """The findings table, first after the problems: it is what readers come for."""
    rows = [(f.claim, f.evidence, f"**{f.verdict}**") for f in judged]
    return ["## Findings", "",
            "Each claim of the seed studies beside what these runs measured. A claim holds "
            "per layout (one run's strategies against each other): confirmed when every "
            "layout supports it, refuted when every layout contradicts it, nuanced when "
            "they disagree or fall in between. A difference inside the 99.9% intervals "
            "counts as noise, neither for nor against; for thread counts, which are exact, "
            "the smallest and largest iterations stand in for the interval.", "",
            md_table(["Claim (seed studies)", "Measured evidence", "Verdict"], rows), ""]


def _inputs(runs, experiments):
    """Every file used, so each number can be traced to its run."""
    labels = {}  # run -> the experiments its jobs' rows are in
    for e in experiments:
        for c in e.configs:
            for r in c.runs:
                labels.setdefault(id(r), []).append(e.label)
    label = {run: ", ".join(dict.fromkeys(found)) for run, found in labels.items()}
    key_from = lambda r: ", ".join(dict.fromkeys(
        r.job_key_from.get(j, load.KEY_FROM_ROOT if r.options_listed else load.KEY_FROM_FIXED)
        for j in r.jobs()))
    shown = lambda value: "—" if value is None else f"{value:g}" if isinstance(value, float) \
        else value
    rows = [(r.path, r.date, r.slurm_job_id or "—", r.nodes, r.ranks, r.trades, r.seed,
             shown(r.sims), shown(r.latency_scale), shown(r.stack_mode), r.iterations,
             ",".join(r.jobs()),
             label[id(r)], key_from(r))
            for r in sorted(runs, key=lambda r: (label[id(r)], r.ranks, r.nodes, r.path))]
    keys = [f"- **{e.label}**: {e.description}" for e in experiments]
    return ["## Inputs", "",
            md_table(["File", "Date", "Slurm job", "Nodes", "Ranks", "Trades", "Seed", "Sims",
                      "Latency scale", "Stacks", "Iterations", "Jobs", "Experiment",
                      "Key from"], rows),
            "", "Each experiment's key, every option that changes a result:", ""] + keys + [""]


def _seed_tables(experiment, rows):
    """The seed studies' table for each job and layout, in their column order."""
    out = ["### Seed-style tables", "",
           f"Mean ± {CONFIDENCE_TEXT} Student-t half-width over iterations (the mean alone "
           f"below {stats.MIN_CI_SAMPLES} iterations). Time is the makespan, the slowest "
           "rank's wall time; throughput is tasks over it. Peak OS Threads is the highest "
           "single rank's peak, as the console prints it: its value where every iteration "
           "agrees, else the mean (smallest–largest iteration). OS threads, all ranks is "
           "their total; memory is the total across ranks.", ""]
    for job in experiment.jobs():
        for config in experiment.configs:
            mine = [r for r in rows if r["job"] == job and r["nodes"] == config.nodes
                    and r["ranks"] == config.ranks]
            if not mine:
                continue
            iterations = sorted({r["iterations"] for r in mine})
            out += [f"#### {job}, {config.label} ({'/'.join(map(str, iterations))} "
                    f"iterations)", "",
                    md_table(["Strategy", "Tasks", "Time (ms)", "Throughput (ops/s)",
                              "Peak OS Threads", "OS threads, all ranks",
                              "Memory (MiB, total across ranks)"],
                             [(r["strategy"], r["tasks"],
                               with_ci((r["time_ms"], r["time_ms_ci"])),
                               with_ci((r["throughput_ops"], r["throughput_ops_ci"])),
                               count_range(r["peak_os_threads"], r["peak_os_threads_min"],
                                           r["peak_os_threads_max"]),
                               count(r["os_threads_all_ranks"]),
                               with_ci((r["memory_mib"], r["memory_mib_ci"])))
                              for r in mine]), ""]
    return out


def _scaling_table(rows):
    """Scaling rows as Markdown; shared by strong and weak series."""
    return md_table(["Job", "Strategy", "Layout", "Trades", "Cores", "Time (ms)",
                     "Throughput (ops/s)", "Speedup", "Efficiency", "Karp–Flatt",
                     "Imbalance"],
                    [(r["job"], r["strategy"],
                      f"{r['experiment']} {r['nodes']}n × {r['ranks']}r", r["trades"],
                      r["cores"], number(r["time_ms"]), number(r["throughput_ops"]),
                      number(r["speedup"]), number(r["efficiency"]), number(r["karp_flatt"]),
                      number(r["imbalance"])) for r in rows])


def _scaling(series, rows):
    """One job's strong-scaling table with its baseline named."""
    out = [f"### Strong scaling, {rows[0]['job']} ({series.description})", "",
           "Same total trades at every size: speedup is the time ratio against the "
           f"smallest layout ({rows[0]['baseline']}).", "", _scaling_table(rows), ""]
    return out


def _amdahl(rows):
    """The Amdahl fits, or why there are none."""
    if not rows:
        return ["### Amdahl fit", "", "No strategy ran at three or more rank counts, the "
                "fewest an Amdahl fit needs.", ""]
    return ["### Amdahl fit", "",
            "T(p) = T1·(s + (1 − s)/p) fitted by least squares to time against ranks. "
            "A serial fraction near 1 means more ranks do not shorten the run (settle is "
            "bound by latency, not CPU); one above 1 or below 0 means the times do not have "
            "Amdahl's shape, and the residual says by how much.", "",
            md_table(["Job", "Strategy", "Points", "Serial fraction s", "Base time T1 (ms)",
                      "RMS residual (ms)", "Residual / mean time"],
                     [(r["job"], r["strategy"], r["points"], f"{r['serial_fraction']:.3f}",
                       number(r["base_time_ms"]), number(r["rms_residual_ms"]),
                       f"{100 * r['relative_residual']:.1f}%") for r in rows]), ""]


def _nodes(experiment, rows):
    """Single against multi-node throughput, or the run that would give it."""
    if not rows:
        return ["### Single against multi-node", "",
                f"Untested: every run of {experiment.label} was on one node. A Slurm sweep "
                "of the same book over two or more nodes gives this comparison.", ""]
    return ["### Single against multi-node", "",
            md_table(["Job", "Strategy", "1 node", "Throughput (ops/s)", "N nodes",
                      "Throughput (ops/s)", "Ratio", "Reading"],
                     [(r["job"], r["strategy"], r["single"], number(r["single_throughput_ops"]),
                       r["multi"], number(r["multi_throughput_ops"]), f"{r['ratio']:.2f}",
                       r["reading"]) for r in rows]), ""]


def _figures(drawn):
    """Each figure inline with its caption."""
    out = ["### Figures", ""]
    for name, caption in drawn:
        out += [f"![{caption}](figures/{name})", "", f"*{caption}*", ""]
    return out


def _weak(series_rows):
    """The weak-scaling tables, or the runs that would make one."""
    out = ["## Weak scaling", ""]
    if not series_rows:
        return out + ["No weak-scaling series: that needs runs of one seed with the same "
                      "trades per rank at two or more rank counts (for example --trades 400 "
                      "at 1 rank and --trades 800 at 2).", ""]
    for series, rows in series_rows:
        out += [f"### {series.description}", "",
                "Same trades per rank at every size: speedup is the throughput ratio "
                "(scaled speedup); ideal weak scaling keeps efficiency at 1.", "",
                _scaling_table(rows), ""]
    return out


METHOD = """## Method

- **Time** of an iteration is its makespan, the largest per-rank `wall_ns`, since all
  ranks start each iteration at a barrier; **throughput** is `tasks` over it.
- **Confidence**: mean ± the {conf} two-sided Student-t half-width,
  t(1 − 0.001/2, n − 1)·sd/√n, over the iterations (pooled over files of the same
  experiment and layout), given for {min_ci} or more iterations and never for fewer.
- **Experiment key**: a job's rows of two runs are one experiment only when every root
  attribute that changes that job's results agrees. Here the keys use: {key}. The
  `/<job>` group's `result_options` names those attributes (the driver's options and
  the job's own), so a settle-only run and a settle+var run pool their settle rows; a
  file without it uses its root `result_options` for every job, and an older file
  without either the fixed list {fallback}, as far as the file has them (a file without
  `stack_mode` counts as own 64 KiB stacks).
  Ranks, nodes and ranks per node are the scaling axes and not part of the key.
  Experiments are never pooled with each other.
- **Peak OS Threads** is the highest single rank's peak thread count in an iteration,
  averaged over iterations, as the console prints it. **OS threads, all ranks** is the
  total over ranks. The finding on OS threads compares the highest-rank counts, and
  takes them as apart when the smallest and largest iterations of the two strategies do
  not overlap: an exact count needs no t-interval.
- **Per-trade data** (the latency CDF, settled counts) comes from one measured
  iteration per file, the strategy group's `iteration_kept`; the Per-trade data table
  names it.
- **Figures** draw bars from the smallest to the largest iteration, values that
  occurred, rather than a t-interval that can reach past what is possible.
- **Metrics**: `tables/metrics.csv` holds every [iteration, rank] dataset of every
  strategy with its `unit`: the mean over ranks and iterations, the interval of the
  per-iteration rank means, and the smallest and largest single rank.
- **Speedup** S is throughput over the smallest layout's throughput. Under strong
  scaling (same trades) that is the time ratio; under weak scaling (same trades per
  rank) it is the scaled speedup.
- **Efficiency** is S/p, with p = ranks / the baseline's ranks.
- **Karp–Flatt** e = (1/S − 1/p)/(1 − 1/p): the serial fraction the measured speedup
  implies, for strong scaling and p > 1.
- **Imbalance** is max/average of per-rank `wall_ns`, averaged over iterations.
- **Cores** are the distinct CPUs the ranks own, per node. Oversubscribed ranks share
  them.
- **Amdahl fit**: least squares of T(p) = a + b/p, so T1 = a + b and s = a/T1. It is
  made only with three or more rank counts.
"""


def _clear(folder, pattern):
    """Remove an earlier report's files, which would otherwise sit beside the new ones
    and look current."""
    for path in glob.glob(os.path.join(folder, pattern)):
        os.remove(path)


def _series_strategies(series, job):
    """Strategies of a job found in any configuration of a series."""
    found = {s for c in series.configs for j, s in c.summaries if j == job}
    return order(found, STRATEGY_ORDER.get(job, []))


def _series_jobs(series):
    """Jobs found in any configuration of a series, in the usual order."""
    return order({j for c in series.configs for j, _ in c.summaries}, JOB_ORDER)


def _experiment(e, figure_dir, prefix, csv_rows):
    """One experiment's section; its table rows are appended to csv_rows by table name."""
    md = [f"## {e.label}: {e.description}", ""]
    rows = tables.seed_rows(e)
    csv_rows["seed"] += rows
    md += _seed_tables(e, rows)
    series_list = tables.strong_series(e)
    if not series_list:
        md += ["### Strong scaling", "", f"{e.label} has one layout only; runs of the same "
               "book at other rank or node counts make a scaling series.", ""]
    for series in series_list:
        for job in e.jobs():
            job_rows = [r for s in e.strategies(job)
                        for r in tables.scaling_rows(series, job, s)]
            if job_rows:
                md += _scaling(series, job_rows)
                csv_rows["scaling"] += job_rows
        fits = [tables.amdahl_row(series, job, s)
                for job in e.jobs() for s in e.strategies(job)]
        fits = [f for f in fits if f is not None]
        md += _amdahl(fits)
        csv_rows["amdahl"] += fits
    node_rows = tables.node_rows(e)
    csv_rows["nodes"] += node_rows
    md += _nodes(e, node_rows)
    csv_rows["metrics"] += tables.metrics_rows(e)
    md += _per_trade(e)
    return md + _figures(figures.draw_all(e, figure_dir, prefix))


def _per_trade(e):
    """Which measured iteration the per-trade columns (latency CDF, settled counts) come
    from, per layout and file: a file keeps them for one iteration only."""
    found = {}
    for config in e.configs:
        for (job, strategy), s in config.summaries.items():
            if s.per_trade:
                where = (config.label, s.per_trade_path, s.kept_text)
                found.setdefault(where, {}).setdefault(job, []).append(strategy)
    if not found:
        return []
    rows = [(layout, path, kept, "; ".join(f"{job}: {', '.join(order(names, STRATEGY_ORDER.get(job, [])))}"
                                           for job, names in sorted(jobs.items())))
            for (layout, path, kept), jobs in found.items()]
    return ["### Per-trade data", "",
            "A file keeps its per-trade columns for one measured iteration, the one its "
            "strategy group's `iteration_kept` names; the latency CDF and the settled "
            "counts use them.", "",
            md_table(["Layout", "File", "Iteration", "Strategies"], rows), ""]


def _weak_series(experiments, csv_rows):
    """The weak-scaling section, across experiments with equal trades per rank."""
    found = []
    for series in tables.weak_series(experiments):
        rows = [r for job in _series_jobs(series) for s in _series_strategies(series, job)
                for r in tables.scaling_rows(series, job, s)]
        if rows:
            found.append((series, rows))
            csv_rows["scaling"] += rows
    return _weak(found)


def write(out_dir, runs, experiments, problems, predicted_rows=(), validation_rows=()):
    """Write report.md, its figures and its CSV tables into out_dir; returns the path of
    report.md. Simulated sweeps (predicted_rows) get a section and a CSV of their own,
    labelled predicted, after everything measured; the skeleton's validation
    (validation_rows) a section after that."""
    figure_dir, table_dir = os.path.join(out_dir, "figures"), os.path.join(out_dir, "tables")
    os.makedirs(figure_dir, exist_ok=True)
    os.makedirs(table_dir, exist_ok=True)
    _clear(figure_dir, "*.png")
    _clear(table_dir, "*.csv")
    judged = findings.judge(experiments)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = ["# loomdist report", "",
          f"{len(runs)} usable file{'s' if len(runs) != 1 else ''} in "
          f"{len(experiments)} experiment{'s' if len(experiments) != 1 else ''}; "
          f"generated {now}. CSV tables are in `tables/`, figures in `figures/`.", ""]
    md += _problems(problems) + _findings(judged) + _inputs(runs, experiments)
    csv_rows = {"seed": [], "scaling": [], "amdahl": [], "nodes": [], "metrics": []}
    many = len(experiments) > 1
    for e in experiments:
        md += _experiment(e, figure_dir, f"{e.label.lower()}_" if many else "", csv_rows)
    md += _weak_series(experiments, csv_rows)
    predicted_md, predicted_csv, measured_csv = predicted.section(
        list(predicted_rows), md_table, figure_dir, runs)
    md += predicted_md
    md += validation.section(list(validation_rows), md_table, figure_dir)
    key = option_names({n for e in experiments for n in e.options})
    md.append(METHOD.format(conf=CONFIDENCE_TEXT, min_ci=stats.MIN_CI_SAMPLES,
                            key=", ".join(f"`{n}`" for n in key),
                            fallback=", ".join(f"`{n}`" for n in
                                               load.RESULT_OPTIONS_FALLBACK)))
    tables.write_all(table_dir, {
        "seed": (tables.SEED_COLUMNS, csv_rows["seed"]),
        "scaling": (tables.SCALING_COLUMNS, csv_rows["scaling"]),
        "amdahl": (tables.AMDAHL_COLUMNS, csv_rows["amdahl"]),
        "nodes": (tables.NODES_COLUMNS, csv_rows["nodes"]),
        "metrics": (tables.METRICS_COLUMNS, csv_rows["metrics"]),
        "findings": (["claim", "evidence", "verdict"], findings.rows(judged))})
    if predicted_csv:
        tables.write_all(table_dir, {"predicted": (predicted.COLUMNS, predicted_csv)})
    if measured_csv:
        tables.write_all(table_dir, {"measured_beside_sweeps": (predicted.MEASURED_COLUMNS,
                                                                measured_csv)})
    path = os.path.join(out_dir, "report.md")
    with open(path, "w") as handle:
        handle.write("\n".join(md))
    return path
