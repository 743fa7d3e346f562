"""The analysis against the schema's newer parts, on synthetic files: UTF-8 string
attributes, the experiment key (result_options, or a fixed list for older files), the
rule that only 3+ iterations give an interval, the meaning of the Peak OS Threads
column, the generic dataset reader and the figures' spreads.
Usage: test_schema.py WORK_DIR
"""
import os
import re
import shutil
import sys
import unittest

import h5py
import numpy as np

import synth
from reporting import report, rows
from analysis import experiments, figures, findings, load, stats

WORK = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.getcwd(), "analysis-schema")
# What the C side lists in result_options beside the book.
NEW_OPTIONS = {"var_kernel": "sort", "os_threads": 200, "pin_fraction": 0.01,
               "fail_rate": 0.002, "cold_stacks": 0, "carriers": 0, "workers": 0,
               "micro_max": 1000000}


def folder(name):
    """A fresh folder for one case."""
    path = os.path.join(WORK, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def new_run(path, **kwargs):
    """A file as loomdist writes it now: UTF-8 strings, every option, result_options,
    units and iteration_kept."""
    options = dict(NEW_OPTIONS, **kwargs.pop("options", {}))
    settings = dict(stack_mode="copy", options=options, result_options=True, units=True,
                    iteration_kept="last")
    settings.update(kwargs)
    synth.write_run(path, **settings)


def grouped(*paths):
    """Load files and group them, as the command does."""
    notes = []
    runs = [load.load_run(p, notes) for p in paths]
    found, more = experiments.group_experiments(runs)
    return found, notes + more


class Utf8Attributes(unittest.TestCase):
    """New files hold variable-length UTF-8 strings, which h5py returns as str; older
    ones hold fixed-length bytes. Both read the same."""
    @classmethod
    def setUpClass(cls):
        cls.dir = folder("utf8")
        cls.new = os.path.join(cls.dir, "new.h5")
        cls.old = os.path.join(cls.dir, "old.h5")
        new_run(cls.new, partition="cyclic")
        new_run(cls.old, partition="cyclic", strings="fixed", noise_seed=4)

    def test_h5py_reads_utf8_as_str(self):
        with h5py.File(self.new, "r") as f:
            self.assertIs(f.attrs["partition"] == "cyclic", True)
            self.assertIsInstance(f.attrs["partition"], str)
            self.assertIs(f.attrs["stack_mode"] == "copy", True)
            self.assertIs(f.attrs["var_kernel"] == "sort", True)
            self.assertIs(f["settle/green"].attrs["strategy"] == "green", True)
            self.assertIs(f["settle/green/wall_ns"].attrs["unit"] == "ns", True)
            self.assertIn("var_kernel", f.attrs["result_options"].split(","))

    def test_fixed_length_strings_are_bytes(self):
        with h5py.File(self.old, "r") as f:
            self.assertIsInstance(f.attrs["partition"], bytes)
            self.assertIs(f.attrs["partition"] == "cyclic", False)

    def test_loader_reads_both_alike(self):
        notes = []
        new, old = load.load_run(self.new, notes), load.load_run(self.old, notes)
        self.assertEqual(notes, [])
        for run in (new, old):
            self.assertEqual(run.options["partition"], "cyclic")
            self.assertEqual(run.options["var_kernel"], "sort")
            self.assertEqual(run.stack_mode, "copy")
            self.assertEqual(run.strategies[("settle", "green")].units["wall_ns"], "ns")
            self.assertEqual(run.jobs(), ["settle", "var"])
        for job in ("settle", "var"):
            self.assertEqual(new.experiment_key(job), old.experiment_key(job))

    def test_both_kinds_merge_as_one_experiment(self):
        out = os.path.join(WORK, "utf8-report")
        status, stderr, text = report(self.dir, out=out)
        self.assertEqual(status, 0, stderr)
        self.assertNotIn("inputs mix", stderr)
        self.assertIn("partition cyclic", text)
        seed = rows(out, "seed")
        self.assertEqual({r["experiment"] for r in seed}, {"E1"})
        self.assertTrue(all(r["iterations"] == "10" for r in seed))


class ExperimentKey(unittest.TestCase):
    """Every option that changes a result is in the key: runs that differ in one are two
    experiments, never merged; ranks and nodes are the scaling axes, not the key."""
    def test_sort_and_select_are_two_experiments(self):
        runs = folder("kernels")
        new_run(os.path.join(runs, "sort.h5"), options={"var_kernel": "sort"})
        new_run(os.path.join(runs, "select.h5"), options={"var_kernel": "select"},
                noise_seed=3)
        out = os.path.join(WORK, "kernels-report")
        status, stderr, text = report(runs, out=out)
        self.assertEqual(status, 0, stderr)
        self.assertIn("inputs mix 2 experiments (they differ in var_kernel)", stderr)
        seed = [r for r in rows(out, "seed") if r["job"] == "var"]
        by_experiment = {}
        for row in seed:
            by_experiment.setdefault(row["experiment"], []).append(row)
        self.assertEqual(len(by_experiment), 2, "sort and select runs were merged")
        for members in by_experiment.values():
            self.assertTrue(all(r["iterations"] == "5" for r in members),
                            "a table merges the iterations of sort and select runs")
        self.assertIn("var_kernel sort", text)
        self.assertIn("var_kernel select", text)
        method = text[text.index("## Method"):]
        for name in ("seed", "trades", "sims", "latency_scale", "stack_mode", "partition",
                     "var_kernel", "os_threads", "pin_fraction", "fail_rate", "cold_stacks",
                     "carriers", "workers", "micro_max"):
            self.assertIn(f"`{name}`", method.split("Ranks, nodes")[0])

    def test_older_files_use_the_fixed_list(self):
        runs = folder("kernels-old")
        for kernel, noise in (("sort", 0), ("select", 1)):
            synth.write_run(os.path.join(runs, f"{kernel}.h5"), stack_mode="copy",
                            options={"var_kernel": kernel}, strings="fixed", noise_seed=noise)
        found, notes = grouped(*(os.path.join(runs, f"{k}.h5") for k in ("sort", "select")))
        self.assertEqual(len(found), 2)
        self.assertTrue(any("differ in var_kernel" in n for n in notes))
        self.assertFalse(any(r.options_listed for e in found for c in e.configs
                             for r in c.runs))

    def test_each_option_splits(self):
        runs = folder("options")
        changed = {"os_threads": 100, "pin_fraction": 0.5, "fail_rate": 0.0,
                   "cold_stacks": 1, "carriers": 1, "workers": 1, "micro_max": 1000,
                   "partition": "cyclic"}
        base = os.path.join(runs, "base.h5")
        new_run(base)
        for name, value in changed.items():
            other = os.path.join(runs, f"{name}.h5")
            if name == "partition":
                new_run(other, partition=value)
            else:
                new_run(other, options={name: value})
            found, notes = grouped(base, other)
            self.assertEqual(len(found), 2, f"runs differing in {name} were merged")
            self.assertTrue(any(f"differ in {name}" in n for n in notes), name)

    def test_ranks_are_the_scaling_axes(self):
        runs = folder("axes")
        paths = [os.path.join(runs, f"r{n}.h5") for n in (1, 2, 4)]
        for ranks, path in zip((1, 2, 4), paths):
            new_run(path, ranks=ranks)
        found, _ = grouped(*paths)
        self.assertEqual(len(found), 1)
        self.assertEqual([c.ranks for c in found[0].configs], [1, 2, 4])
        attrs = {"result_options": "seed,ranks,nodes,ranks_per_node,var_kernel",
                 "seed": 1, "ranks": 2, "nodes": 1, "ranks_per_node": 2, "var_kernel": "sort"}
        self.assertEqual(load.result_option_names(attrs), ["seed", "var_kernel"])

    def test_listed_but_missing_keeps_apart(self):
        attrs = {"result_options": "seed,var_kernel", "seed": 1}
        options, listed = load.read_options(attrs)
        self.assertTrue(listed)
        self.assertEqual(options, {"seed": 1, "var_kernel": None})
        self.assertNotEqual(tuple(sorted(options.items())),
                            tuple(sorted({"seed": 1, "var_kernel": "sort"}.items())))


class PerJobKey(unittest.TestCase):
    """A job's rows are keyed by the options its /<job> group's result_options names:
    settle rows of a settle-only run and a settle+var run with the same settle options
    are merged, while var rows of different kernels never are."""
    def test_settle_only_and_settle_var_merge_for_settle(self):
        runs = folder("per-job-settle")
        only, both = os.path.join(runs, "settle.h5"), os.path.join(runs, "both.h5")
        new_run(only, jobs=("settle",), job_result_options=True)
        new_run(both, job_result_options=True, noise_seed=2)
        with h5py.File(only, "r") as f:  # as before, the files' own keys differ
            self.assertNotIn("var_kernel", f.attrs["result_options"].split(","))
            self.assertNotIn("sims", f["settle"].attrs["result_options"].split(","))
        with h5py.File(both, "r") as f:
            self.assertIn("var_kernel", f.attrs["result_options"].split(","))
            self.assertIn("var_kernel", f["var"].attrs["result_options"].split(","))
        found, notes = grouped(only, both)
        self.assertFalse(any("inputs mix" in n for n in notes), notes)
        settle = [e for e in found if "settle" in e.jobs()]
        self.assertEqual(len(settle), 1, "settle rows of the two files were kept apart")
        config = settle[0].configs[0]
        self.assertEqual(len(config.job_runs["settle"]), 2)
        self.assertEqual(config.summaries[("settle", "green")].iterations, 10)
        self.assertNotIn("var_kernel", settle[0].options)
        var = [e for e in found if "var" in e.jobs()]
        self.assertEqual(len(var), 1)
        self.assertEqual(var[0].configs[0].summaries[("var", "pool")].iterations, 5)
        self.assertNotIn("latency_scale", var[0].options)
        out = os.path.join(WORK, "per-job-settle-report")
        status, stderr, text = report(runs, out=out)
        self.assertEqual(status, 0, stderr)
        seed = [r for r in rows(out, "seed") if r["job"] == "settle"]
        self.assertTrue(seed and all(r["iterations"] == "10" for r in seed), seed)
        self.assertIn("job's result_options", text)

    def test_var_kernels_stay_apart_for_var(self):
        runs = folder("per-job-var")
        paths = [os.path.join(runs, f"{k}.h5") for k in ("sort", "select")]
        for path, kernel, noise in zip(paths, ("sort", "select"), (0, 3)):
            new_run(path, options={"var_kernel": kernel}, job_result_options=True,
                    noise_seed=noise)
        found, notes = grouped(*paths)
        var = [e for e in found if "var" in e.jobs()]
        self.assertEqual(len(var), 2, "sort and select var rows were merged")
        self.assertEqual({e.options["var_kernel"] for e in var}, {"sort", "select"})
        for e in var:
            self.assertEqual(e.configs[0].summaries[("var", "pool")].iterations, 5)
        self.assertTrue(any("differ in var_kernel" in n and "for var:" in n for n in notes),
                        notes)
        settle = [e for e in found if "settle" in e.jobs()]
        self.assertEqual(len(settle), 1, "settle rows do not depend on var_kernel")
        self.assertEqual(settle[0].configs[0].summaries[("settle", "green")].iterations, 10)


class Intervals(unittest.TestCase):
    """3 or more iterations give a 99.9% Student-t interval; fewer give none."""
    def test_stats_rule(self):
        self.assertEqual(stats.mean_ci([1.0, 2.0]), (1.5, None))
        self.assertEqual(stats.mean_ci([7.0]), (7.0, None))
        mean, half = stats.mean_ci([1.0, 2.0, 3.0])
        self.assertAlmostEqual(half, stats.student_t_quantile(0.9995, 2) / np.sqrt(3))

    def test_report_rule(self):
        for iterations, has_ci in ((1, False), (2, False), (3, True)):
            runs = folder(f"ci-{iterations}")
            new_run(os.path.join(runs, "run.h5"), iterations=iterations)
            out = os.path.join(WORK, f"ci-{iterations}-report")
            status, stderr, _ = report(runs, out=out)
            self.assertEqual(status, 0, stderr)
            for row in rows(out, "seed"):
                for column in ("time_ms_ci", "throughput_ops_ci", "memory_mib_ci"):
                    self.assertEqual(row[column] != "", has_ci,
                                     f"{iterations} iterations: {column} = {row[column]!r}")
            for row in rows(out, "metrics"):
                self.assertEqual(row["mean_ci"] != "", has_ci)

    def test_merged_files_count_their_iterations(self):
        runs = folder("ci-merged")
        paths = [os.path.join(runs, f"fork{i}.h5") for i in range(3)]
        for i, path in enumerate(paths):
            new_run(path, iterations=1, noise_seed=i)
        two, _ = grouped(*paths[:2])
        three, _ = grouped(*paths)
        self.assertIsNone(two[0].configs[0].summaries[("settle", "green")].time_ms[1])
        self.assertIsNotNone(three[0].configs[0].summaries[("settle", "green")].time_ms[1])


def set_threads(path, strategy, values):
    """Overwrite one settle strategy's peak_threads [iteration, rank]."""
    with h5py.File(path, "r+") as f:
        f[f"settle/{strategy}/peak_threads"][...] = np.asarray(values, dtype=np.int64)


def os_threads_finding(path):
    """The 'far fewer OS threads' finding for one file."""
    found, _ = grouped(path)
    return next(f for f in findings.judge(found) if "fewer OS threads" in f.claim)


class ThreadColumn(unittest.TestCase):
    """The report's Peak OS Threads is the highest single rank, as on the console; the
    total over ranks is a column of its own name."""
    def test_per_rank_and_total(self):
        runs = folder("threads")
        path = os.path.join(runs, "r4.h5")
        new_run(path, ranks=4, iterations=3)
        set_threads(path, "threads", [[203, 203, 203, 203]] * 3)
        set_threads(path, "green", [[5, 5, 4, 5]] * 3)
        out = os.path.join(WORK, "threads-report")
        status, stderr, text = report(runs, out=out)
        self.assertEqual(status, 0, stderr)
        seed = {r["strategy"]: r for r in rows(out, "seed") if r["job"] == "settle"}
        self.assertEqual(float(seed["threads"]["peak_os_threads"]), 203.0)
        self.assertEqual(float(seed["threads"]["os_threads_all_ranks"]), 812.0)
        self.assertEqual(float(seed["green"]["peak_os_threads"]), 5.0)
        self.assertEqual(float(seed["green"]["os_threads_all_ranks"]), 19.0)
        header = next(line for line in text.splitlines() if "Peak OS Threads" in line
                      and line.startswith("| Strategy"))
        cells = [c.strip() for c in header.strip("|").split("|")]
        self.assertIn("OS threads, all ranks", cells)
        row = next(line for line in text.splitlines() if line.startswith("| threads |"))
        values = [c.strip() for c in row.strip("|").split("|")]
        self.assertEqual(values[cells.index("Peak OS Threads")], "203")
        self.assertEqual(values[cells.index("OS threads, all ranks")], "812")

    def test_finding_not_fooled_by_a_t_interval(self):
        """A total over ranks that dips in two of three iterations once gave
        399.7 ± 1,771 and a 'nuanced' verdict. The per-rank count, judged by the
        iterations that occurred, confirms the claim."""
        runs = folder("threads-noise")
        path = os.path.join(runs, "r4.h5")
        new_run(path, ranks=4, iterations=3)
        set_threads(path, "threads", [[203, 203, 203, 203], [203, 203, 10, 203],
                                      [150, 40, 203, 203]])
        set_threads(path, "green", [[5, 5, 5, 5]] * 3)
        totals = np.array([812, 619, 596], dtype=float)
        self.assertGreater(stats.mean_ci(totals)[1], stats.mean_ci(totals)[0])
        finding = os_threads_finding(path)
        self.assertEqual(finding.verdict, "confirmed", finding.evidence)
        self.assertIn("highest single rank: 203 against 5", finding.evidence)

    def test_fewer_threads_when_close_is_not_confirmed(self):
        runs = folder("threads-close")
        path = os.path.join(runs, "r1.h5")
        new_run(path, iterations=3)
        set_threads(path, "threads", [[5], [5], [5]])
        set_threads(path, "green", [[5], [5], [5]])
        self.assertEqual(os_threads_finding(path).verdict, "refuted")


class GenericReader(unittest.TestCase):
    """Datasets are read by shape, whatever their names, each with its unit; the
    per-trade columns' measured iteration is shown where they are used."""
    @classmethod
    def setUpClass(cls):
        cls.runs = folder("generic")
        cls.path = os.path.join(cls.runs, "run.h5")
        new_run(cls.path, iterations=4)
        with h5py.File(cls.path, "r+") as f:
            g = f["settle/green"]
            g["queue_depth"] = np.full((4, 1), 7.5)
            g["queue_depth"].attrs["unit"] = "tasks"
            g["retries"] = np.zeros(400, dtype=np.int32)
            g["cube"] = np.zeros((2, 2, 2))
        cls.out = os.path.join(WORK, "generic-report")
        cls.status, cls.stderr, cls.text = report(cls.runs, out=cls.out)

    def test_report_made(self):
        self.assertEqual(self.status, 0, self.stderr)

    def test_new_metric_with_unit(self):
        metric = [r for r in rows(self.out, "metrics")
                  if r["strategy"] == "green" and r["job"] == "settle"
                  and r["metric"] == "queue_depth"]
        self.assertEqual(len(metric), 1)
        self.assertEqual(metric[0]["unit"], "tasks")
        self.assertAlmostEqual(float(metric[0]["mean"]), 7.5)
        wall = [r for r in rows(self.out, "metrics") if r["metric"] == "wall_ns"]
        self.assertTrue(wall and all(r["unit"] == "ns" for r in wall))

    def test_new_per_trade_column_and_odd_shape(self):
        notes = []
        run = load.load_run(self.path, notes)
        green = run.strategies[("settle", "green")]
        self.assertIn("retries", green.per_trade)
        self.assertIn("queue_depth", green.per_rank)
        self.assertEqual(green.iteration_kept, 3)
        self.assertTrue(any("cube" in n and "left out" in n for n in notes))
        self.assertIn("settle/green/cube", self.stderr)

    def test_iteration_kept_is_shown(self):
        self.assertIn("measured iteration 4 of 4 (iteration_kept 3)", self.text)
        cdf = [line for line in self.text.splitlines() if line.startswith("*")
               and "latency CDF" in line]
        self.assertTrue(cdf and "iteration_kept 3" in cdf[0])
        pinning = next(r for r in rows(self.out, "findings") if "Pinning" in r["claim"])
        self.assertIn("iteration_kept 3", pinning["evidence"])

    def test_iteration_kept_out_of_range(self):
        runs = folder("kept-bad")
        path = os.path.join(runs, "run.h5")
        new_run(path, iterations=2, iteration_kept=5)
        notes = []
        with self.assertRaises(load.InputError):
            load.load_run(path, notes)
        self.assertTrue(all("iteration_kept 5" in n for n in notes))


class Figures(unittest.TestCase):
    """What a reader sees: bars that cannot pass what occurred, throughput from zero
    with error bars and the legend off the data, a line style per strategy."""
    @classmethod
    def setUpClass(cls):
        runs = folder("figures")
        paths = []
        for ranks in (1, 2, 4):
            paths.append(os.path.join(runs, f"r{ranks}.h5"))
            new_run(paths[-1], ranks=ranks, iterations=3)
        set_threads(paths[-1], "threads", [[203, 203, 203, 203], [203, 203, 10, 203],
                                           [150, 40, 203, 203]])
        cls.experiment = grouped(*paths)[0][0]
        cls.dir = folder("figures-out")

    def capture(self, draw, *args):
        """Draw one figure and keep it open for inspection."""
        kept = {}
        original = figures._save

        def keep(fig, folder_, name, layout=True):
            kept["fig"] = fig
            return name
        figures._save = keep
        try:
            drawn = draw(self.experiment, *args, self.dir, "")
        finally:
            figures._save = original
        self.assertIsNotNone(drawn)
        return kept["fig"]

    def test_spread(self):
        self.assertEqual(figures.spread(10.0, 8.0, 15.0), (2.0, 5.0))
        self.assertEqual(figures.spread(3.0, 3.0, 3.0), (0.0, 0.0))

    def test_resources_bars_stay_within_what_occurred(self):
        fig = self.capture(figures.resources, "settle")
        threads_ax = fig.axes[0]
        config = self.experiment.largest("settle")
        names = self.experiment.strategies("settle")
        caps = [c for c in threads_ax.containers if hasattr(c, "lines") and c.lines]
        self.assertTrue(caps)
        segments = caps[0].lines[2][0].get_segments()
        for name, segment in zip(names, segments):
            low, high = config.summaries[("settle", name)].peak_threads_range
            self.assertGreaterEqual(min(segment[:, 1]), low - 1e-9, name)
            self.assertLessEqual(max(segment[:, 1]), high + 1e-9, name)
            self.assertLessEqual(high, 4 * 203)
        figures.plt.close(fig)

    def test_throughput_from_zero_with_bars_and_legend_off_the_data(self):
        fig = self.capture(figures.throughput, "settle")
        for ax in fig.axes:
            self.assertEqual(ax.get_ylim()[0], 0.0)
            self.assertEqual(ax.get_yscale(), "linear")
            self.assertIsNone(ax.get_legend())
            self.assertTrue(any(type(c).__name__ == "ErrorbarContainer"
                                for c in ax.containers))
        self.assertEqual(len(fig.legends), 1)
        fig.canvas.draw()
        legend_box = fig.legends[0].get_window_extent(fig.canvas.get_renderer())
        for ax in fig.axes:
            self.assertFalse(legend_box.overlaps(ax.get_window_extent()))
        figures.plt.close(fig)

    def test_cdf_strategies_look_different(self):
        fig = self.capture(figures.latency_cdf)
        ax = fig.axes[0]
        lines = [l for l in ax.get_lines() if l.get_label() in self.experiment.strategies("settle")]
        self.assertEqual(len(lines), 5)
        self.assertEqual(len({l.get_marker() for l in lines}), 5)
        self.assertEqual(len({str(l._dash_pattern) for l in lines}), 5)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        self.assertFalse(ax.get_legend().get_window_extent(renderer)
                         .overlaps(ax.get_window_extent(renderer)),
                         "the legend covers the curves")
        figures.plt.close(fig)


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    unittest.main()
