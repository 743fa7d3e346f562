"""Grouping runs into experiments and configurations, and summarizing each strategy.

An experiment is, per job, every run whose options that change that job's results all
agree: the driver's (the book, the stacks, the partition) and the job's own (the latency
scale and OS threads for settle, sims and the VaR kernel for var), as the /<job> group's
`result_options` names them (else the file's, else a fixed list). So the settle rows of
a settle-only run and of a settle+var run are merged, while var rows of different
kernels never are. Within an experiment, a configuration is one (nodes, ranks) layout;
repeated runs of one layout are merged as further iterations, as JMH combines forks.
"""
from dataclasses import dataclass, field

import numpy as np

from . import stats

# The seed studies' order, so tables read like theirs; strategies added later follow.
STRATEGY_ORDER = {
    "settle": ["threads", "green", "green-pinned", "green-monitor", "callbacks"],
    "var": ["sequential", "green", "pool", "steal"],
}
JOB_ORDER = ["settle", "var"]
# The key's options in the order the report names them: the book first, then the rest
# alphabetically.
OPTION_ORDER = ["seed", "trades", "sims", "latency_scale", "stack_mode", "stack_kib"]
# How the description names an option; others appear as "name value".
OPTION_WORDS = {
    "seed": lambda v: f"seed {v}", "trades": lambda v: f"{v} trades",
    "sims": lambda v: f"{v} sims", "latency_scale": lambda v: f"latency scale {v:g}",
    "stack_mode": lambda v: f"{v} stacks", "stack_kib": lambda v: f"{v} KiB stacks",
    "workers": lambda v: "workers one per CPU" if v == 0 else f"workers {v}",
    "carriers": lambda v: "carriers one per CPU" if v == 0 else f"carriers {v}",
    "cpu_model": lambda v: f"CPU {v}", "cpu_flags": lambda v: f"flags {v.replace(',', ' ')}",
}


@dataclass
class Summary:
    """One strategy in one configuration, across its iterations.

    peak_threads is the highest single rank's peak in each iteration, the meaning the
    console table gives "Peak OS Threads"; os_threads_all_ranks and memory_mib are summed
    over ranks within an iteration first, so they are what the whole job used at once.
    The *_range fields are the smallest and largest per-iteration values: spreads that
    did occur, for figures and for exact counts whose t-interval would mislead."""
    job: str
    strategy: str
    nodes: int
    ranks: int
    cores: int
    cpus_per_rank: int
    trades: int
    tasks: int
    threads: int
    iterations: int
    time_ms: tuple
    throughput: tuple
    throughput_range: tuple
    peak_threads: tuple
    peak_threads_range: tuple
    os_threads_all_ranks: tuple
    memory_mib: tuple
    memory_mib_range: tuple
    imbalance: float
    per_trade: dict          # column -> array, from one measured iteration of one file
    per_trade_path: str      # the file the per-trade columns come from
    iteration_kept: object   # 0-based measured iteration they come from; None: unsaid
    file_iterations: int     # measured iterations in that file
    critical_path_ns: int
    per_rank: dict           # every [iteration, rank] metric, the runs' iterations merged
    units: dict              # dataset name -> unit

    @property
    def settled(self):
        """Trades whose status is 0 (settled), where the job records a status."""
        status = self.per_trade.get("status")
        return None if status is None else int(np.count_nonzero(status == 0))

    @property
    def latency_ns(self):
        """Per-trade settle latency, where the job records it."""
        return self.per_trade.get("latency_ns")

    @property
    def kept_text(self):
        """Which measured iteration the per-trade columns come from, for a reader."""
        if self.iteration_kept is None:
            return "the last measured iteration (the file does not record which)"
        return (f"measured iteration {self.iteration_kept + 1} of {self.file_iterations} "
                f"(iteration_kept {self.iteration_kept})")


@dataclass
class Config:
    """All runs of one experiment with the same nodes and ranks."""
    experiment: str
    nodes: int
    ranks: int
    runs: list
    summaries: dict = field(default_factory=dict)  # (job, strategy) -> Summary
    job_runs: dict = field(default_factory=dict)   # job -> the runs its rows come from

    @property
    def label(self):
        """How the configuration is named in tables and evidence."""
        node_word = "node" if self.nodes == 1 else "nodes"
        rank_word = "rank" if self.ranks == 1 else "ranks"
        return f"{self.nodes} {node_word} × {self.ranks} {rank_word}"


@dataclass
class Experiment:
    """Runs with one value of every result-changing option; configs are sorted from the
    smallest layout up."""
    label: str
    options: dict   # option name -> value, the experiment key
    configs: list

    @property
    def seed(self):
        return self.options.get("seed")

    @property
    def trades(self):
        return self.configs[0].runs[0].trades

    @property
    def sims(self):
        return self.configs[0].runs[0].sims

    @property
    def latency_scale(self):
        return self.configs[0].runs[0].latency_scale

    @property
    def stack_mode(self):
        return self.configs[0].runs[0].stack_mode

    @property
    def description(self):
        """Every option of the key, as the report names the experiment."""
        return describe(self.options)

    def jobs(self):
        """Jobs any configuration ran, in the seed studies' order."""
        found = {job for c in self.configs for job, _ in c.summaries}
        return order(found, JOB_ORDER)

    def strategies(self, job):
        """Strategies of a job any configuration ran, in the seed studies' order."""
        found = {s for c in self.configs for j, s in c.summaries if j == job}
        return order(found, STRATEGY_ORDER.get(job, []))

    def largest(self, job):
        """The biggest configuration that ran the job: the one most worth plotting."""
        having = [c for c in self.configs if any(j == job for j, _ in c.summaries)]
        return max(having, key=lambda c: (c.ranks, c.nodes)) if having else None


def order(names, preferred):
    """Known names in their preferred order, then unknown ones alphabetically."""
    return [n for n in preferred if n in names] + sorted(set(names) - set(preferred))


def option_names(options):
    """The key's option names in the report's order."""
    return order(options, OPTION_ORDER)


def option_text(name, value):
    """One option as the report writes it."""
    if value is None:
        return f"{name} not recorded"
    word = OPTION_WORDS.get(name)
    if word is not None:
        try:
            return word(value)
        except (TypeError, ValueError):
            pass
    return f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}"


def describe(options):
    """The key as one line: 'seed 42, 400 trades, ..., var_kernel sort'."""
    return ", ".join(option_text(n, options[n]) for n in option_names(options))


def _sort_key(options):
    """Experiments numbered in a stable, readable order: by the book, numbers as
    numbers, whatever types the options have."""
    def part(value):
        if isinstance(value, (int, float)):
            return (0, float(value), "")
        return (1, 0.0, "" if value is None else str(value))
    return [(name, part(options[name])) for name in option_names(options)]


def _merged(runs, job, strategy):
    """Stack the iterations of every run of a layout that has this strategy; metrics
    only some of the runs recorded are left out rather than merged short."""
    having = [r.strategies[(job, strategy)] for r in runs if (job, strategy) in r.strategies]
    common = set.intersection(*(set(s.per_rank) for s in having))
    per_rank = {m: np.concatenate([s.per_rank[m] for s in having])
                for m in having[0].per_rank if m in common}
    return having, per_rank


def _range(values):
    """The smallest and largest value: a spread that did occur."""
    values = np.asarray(values, dtype=float)
    return float(values.min()), float(values.max())


def summarize(runs, job, strategy):
    """Reduce one strategy over ranks and iterations to the seed tables' columns."""
    having, per_rank = _merged(runs, job, strategy)
    group = having[0]
    source = next(r for r in runs if (job, strategy) in r.strategies)
    makespan_ns = stats.makespans_ns(per_rank["wall_ns"])
    throughput = group.tasks / (makespan_ns / 1e9)
    highest_rank = per_rank["peak_threads"].max(axis=1)
    memory = per_rank["peak_rss_kib"].sum(axis=1) / 1024.0
    return Summary(
        job=job, strategy=strategy, nodes=source.nodes, ranks=source.ranks,
        cores=source.cores, cpus_per_rank=source.cpus_per_rank,
        trades=source.trades, tasks=group.tasks, threads=group.threads,
        iterations=int(makespan_ns.size),
        time_ms=stats.mean_ci(makespan_ns / 1e6),
        throughput=stats.mean_ci(throughput), throughput_range=_range(throughput),
        peak_threads=stats.mean_ci(highest_rank), peak_threads_range=_range(highest_rank),
        os_threads_all_ranks=stats.mean_ci(per_rank["peak_threads"].sum(axis=1)),
        memory_mib=stats.mean_ci(memory), memory_mib_range=_range(memory),
        imbalance=stats.imbalance(per_rank["wall_ns"]),
        per_trade=group.per_trade, per_trade_path=source.path,
        iteration_kept=group.iteration_kept,
        file_iterations=int(group.per_rank["wall_ns"].shape[0]),
        critical_path_ns=group.critical_path_ns, per_rank=per_rank, units=group.units)


def _config(label, pairs):
    """Summarize every strategy of one layout, each job from the runs whose rows of that
    job belong to this experiment. pairs: (run, job), in file order."""
    runs = list({id(r): r for r, _ in pairs}.values())
    config = Config(experiment=label, nodes=runs[0].nodes, ranks=runs[0].ranks, runs=runs)
    for job in {j for _, j in pairs}:
        having = config.job_runs[job] = [r for r, j in pairs if j == job]
        for strategy in {s for r in having for j, s in r.strategies if j == job}:
            config.summaries[(job, strategy)] = summarize(having, job, strategy)
    return config


def differing(experiments):
    """What keeps experiments apart: (options that have different values where
    recorded, options some experiments record and others do not)."""
    names = {n for e in experiments for n in e.options}
    values, presence = [], []
    for name in names:
        having = [e for e in experiments if name in e.options]
        if len({repr(e.options[name]) for e in having}) > 1:
            values.append(name)
        if len(having) < len(experiments):
            presence.append(name)
    return option_names(values), option_names(presence)


def _apart_text(experiments):
    """'they differ in var_kernel; only some record latency_scale' for the note."""
    values, presence = differing(experiments)
    parts = []
    if values:
        parts.append(f"they differ in {', '.join(values)}")
    if presence:
        parts.append(f"only some record {', '.join(presence)} (a job's options are "
                     f"written only when it ran; older files record fewer)")
    return "; ".join(parts)


def group_experiments(runs):
    """Split each run's jobs into experiments by every option that changes that job's
    results, and each experiment into configurations by layout. A run whose jobs have
    different keys is in more than one experiment. Returns the experiments and one line
    per thing the user should know about the grouping."""
    by_key = {}
    for run in runs:
        for job in run.jobs():
            by_key.setdefault(run.experiment_key(job), []).append((run, job))
    experiments, notes = [], []
    ordered_keys = sorted(by_key, key=lambda k: _sort_key(dict(k)))
    for index, key in enumerate(ordered_keys):
        pairs = by_key[key]
        label = f"E{index + 1}"
        layouts = {}
        for run, job in pairs:
            layouts.setdefault((run.nodes, run.ranks), []).append((run, job))
        ordered = sorted(layouts, key=lambda k: (k[1], k[0]))  # by ranks, then nodes
        configs = [_config(label, layouts[k]) for k in ordered]
        experiments.append(Experiment(label, dict(key), configs))
        notes.extend(_missing_jobs(label, list({id(r): r for r, _ in pairs}.values()),
                                   {job for _, job in pairs}))
    mixes = {}  # the experiments one job is split over -> the jobs split so
    for job in order({j for e in experiments for j in e.jobs()}, JOB_ORDER):
        apart = tuple(e for e in experiments if job in e.jobs())
        if len(apart) > 1:
            mixes.setdefault(tuple(e.label for e in apart), (apart, []))[1].append(job)
    for apart, jobs in mixes.values():
        parts = "; ".join(f"{e.label}: {e.description} ({_files(e, jobs)} files)"
                          for e in apart)
        notes.append(f"inputs mix {len(apart)} experiments ({_apart_text(apart)}); each is "
                     f"reported on its own, never pooled, for {', '.join(jobs)}: {parts}")
    return experiments, notes


def _files(experiment, jobs):
    """How many files give an experiment its rows of these jobs."""
    return len({id(r) for c in experiment.configs for job in jobs
                for r in c.job_runs.get(job, [])})


def _missing_jobs(label, members, every):
    """Name files of an experiment that lack one of its jobs (every) that the others
    ran, unless the file itself already said so by listing the job."""
    notes = []
    for run in members:
        for job in sorted(every - set(run.jobs()) - set(run.jobs_listed)):
            notes.append(f"{run.path}: has no {job} job, which other runs of {label} have; "
                         f"its other jobs are used")
    return notes
