"""Grouping runs into experiments and configurations, and summarizing each strategy.

An experiment is every run of one book, (seed, trades, sims, latency_scale), with one
stack mode: only those may share a table. Within it, a configuration is one (nodes, ranks) layout; repeated runs
of one layout are pooled as further iterations, as JMH pools forks.
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


@dataclass
class Summary:
    """One strategy in one configuration, across its iterations. Totals are summed over
    ranks within an iteration first, so they are what the whole job used at once."""
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
    peak_threads: tuple
    memory_mib: tuple
    imbalance: float
    settled: int
    latency_ns: np.ndarray
    critical_path_ns: int


@dataclass
class Config:
    """All runs of one experiment with the same nodes and ranks."""
    experiment: str
    nodes: int
    ranks: int
    runs: list
    summaries: dict = field(default_factory=dict)  # (job, strategy) -> Summary

    @property
    def label(self):
        """How the configuration is named in tables and evidence."""
        node_word = "node" if self.nodes == 1 else "nodes"
        rank_word = "rank" if self.ranks == 1 else "ranks"
        return f"{self.nodes} {node_word} × {self.ranks} {rank_word}"


@dataclass
class Experiment:
    """Runs of one book; configs are sorted from the smallest layout up."""
    label: str
    seed: int
    trades: int
    sims: int
    latency_scale: float
    stack_mode: str
    configs: list

    @property
    def description(self):
        """The book that defines the experiment, as the report names it."""
        return (f"seed {self.seed}, {self.trades} trades, {self.sims} sims, "
                f"latency scale {self.latency_scale:g}, {self.stack_mode} stacks")

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


def _pooled(runs, job, strategy):
    """Stack the iterations of every run of a layout that has this strategy."""
    having = [r.strategies[(job, strategy)] for r in runs if (job, strategy) in r.strategies]
    per_rank = {m: np.concatenate([s.per_rank[m] for s in having]) for m in having[0].per_rank}
    return having[0], per_rank


def summarize(runs, job, strategy):
    """Reduce one strategy over ranks and iterations to the seed tables' columns."""
    first_run = runs[0]
    group, per_rank = _pooled(runs, job, strategy)
    makespan_ns = stats.makespans_ns(per_rank["wall_ns"])
    settled = None if group.status is None else int(np.count_nonzero(group.status == 0))
    return Summary(
        job=job, strategy=strategy, nodes=first_run.nodes, ranks=first_run.ranks,
        cores=first_run.cores, cpus_per_rank=first_run.cpus_per_rank,
        trades=first_run.trades, tasks=group.tasks, threads=group.threads,
        iterations=int(makespan_ns.size),
        time_ms=stats.mean_ci(makespan_ns / 1e6),
        throughput=stats.mean_ci(group.tasks / (makespan_ns / 1e9)),
        peak_threads=stats.mean_ci(per_rank["peak_threads"].sum(axis=1)),
        memory_mib=stats.mean_ci(per_rank["peak_rss_kib"].sum(axis=1) / 1024.0),
        imbalance=stats.imbalance(per_rank["wall_ns"]),
        settled=settled, latency_ns=group.latency_ns,
        critical_path_ns=group.critical_path_ns)


def _config(label, runs):
    """Summarize every strategy any run of one layout holds."""
    config = Config(experiment=label, nodes=runs[0].nodes, ranks=runs[0].ranks, runs=runs)
    keys = {key for r in runs for key in r.strategies}
    for job, strategy in keys:
        config.summaries[(job, strategy)] = summarize(runs, job, strategy)
    return config


def group_experiments(runs):
    """Split runs into experiments by book and into configurations by layout. Returns
    the experiments and one line per thing the user should know about the grouping."""
    by_key = {}
    for run in runs:
        by_key.setdefault(run.experiment_key, []).append(run)
    experiments, notes = [], []
    for index, (key, members) in enumerate(sorted(by_key.items(), key=lambda kv: kv[0])):
        label = f"E{index + 1}"
        layouts = {}
        for run in members:
            layouts.setdefault((run.nodes, run.ranks), []).append(run)
        ordered = sorted(layouts, key=lambda k: (k[1], k[0]))  # by ranks, then nodes
        configs = [_config(label, layouts[k]) for k in ordered]
        seed, trades, sims, scale, stack_mode = key
        experiments.append(Experiment(label, seed, trades, sims, scale, stack_mode, configs))
        notes.extend(_missing_jobs(label, members))
    if len(experiments) > 1:
        parts = "; ".join(f"{e.label}: {e.description} ({sum(len(c.runs) for c in e.configs)}"
                          f" files)" for e in experiments)
        notes.append(f"inputs mix {len(experiments)} experiments (seed, trades, sims or "
                     f"latency scale differ); each is reported on its own, never pooled: "
                     f"{parts}")
    return experiments, notes


def _missing_jobs(label, members):
    """Name files of an experiment that lack a job the others ran, unless the file
    itself already said so by listing the job."""
    every = {job for run in members for job in run.jobs()}
    notes = []
    for run in members:
        for job in sorted(every - set(run.jobs()) - set(run.jobs_listed)):
            notes.append(f"{run.path}: has no {job} job, which other runs of {label} have; "
                         f"its other jobs are used")
    return notes
