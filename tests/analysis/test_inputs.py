"""The report command on bad, partial and mixed inputs, made as synthetic files so that no
loomdist binary is needed. Each case runs the command as a user would and checks its
exit status, its stderr and the report. Usage: test_inputs.py WORK_DIR
"""
import os
import shutil
import sys
import unittest

import h5py
import synth
from reporting import report, rows

WORK = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.getcwd(), "analysis-inputs")


def folder(name):
    """A fresh folder for one case."""
    path = os.path.join(WORK, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class NothingUsable(unittest.TestCase):
    """With no usable file the command exits 2 and says why."""
    def test_empty_folder(self):
        empty = folder("empty")
        status, stderr, _ = report(empty, out=os.path.join(WORK, "empty-report"))
        self.assertEqual(status, 2)
        self.assertIn("holds no .h5 or .hdf5 file", stderr)
        self.assertIn("no usable loomdist file", stderr)
        self.assertNotIn("Traceback", stderr)

    def test_only_bad_files(self):
        bad = folder("bad")
        synth.write_run(os.path.join(bad, "good.h5"))
        with open(os.path.join(bad, "good.h5"), "rb") as src:
            head = src.read(2048)
        with open(os.path.join(bad, "cut.h5"), "wb") as dst:
            dst.write(head)
        os.remove(os.path.join(bad, "good.h5"))
        with open(os.path.join(bad, "text.h5"), "w") as dst:
            dst.write("not hdf5\n")
        synth.write_run(os.path.join(bad, "future.h5"), schema_version=3)
        status, stderr, _ = report(bad, os.path.join(WORK, "missing.h5"),
                                   out=os.path.join(WORK, "bad-report"))
        self.assertEqual(status, 2)
        for expected in ("cut.h5: skipped: truncated or corrupt HDF5 file",
                         "text.h5: skipped: not an HDF5 file",
                         "future.h5: refused: schema_version 3",
                         "missing.h5: no such file or folder"):
            self.assertIn(expected, stderr)
        self.assertNotIn("Traceback", stderr)


class OlderSchema(unittest.TestCase):
    """A schema 1 file, from before /trades lost its two derived columns, is read as
    before: what the analysis reads is the same in both."""
    def test_schema_1_is_read(self):
        runs = folder("schema-1")
        synth.write_run(os.path.join(runs, "v1.h5"), schema_version=1)
        out = os.path.join(WORK, "schema-1-report")
        status, stderr, _ = report(runs, out=out)
        self.assertEqual(status, 0, stderr)
        self.assertNotIn("refused", stderr)
        self.assertTrue(rows(out, "seed"))


class PartialAndMixed(unittest.TestCase):
    """A folder of good, bad, partial and mixed files still gives a report."""
    @classmethod
    def setUpClass(cls):
        cls.runs = folder("mixed")
        for ranks in (1, 2, 4):
            synth.write_run(os.path.join(cls.runs, f"r{ranks}.h5"), ranks=ranks)
        sweep = os.path.join(cls.runs, "sweep", "job-17")
        os.makedirs(sweep)
        synth.write_run(os.path.join(sweep, "n2.h5"), ranks=4, nodes=2)
        synth.write_run(os.path.join(cls.runs, "w2.h5"), ranks=2, trades=800)
        synth.write_run(os.path.join(cls.runs, "seed7.h5"), ranks=1, seed=7)
        synth.write_run(os.path.join(cls.runs, "lost-var.h5"), ranks=2, jobs=("settle",),
                        listed_jobs=("settle", "var"), noise_seed=3)
        synth.write_run(os.path.join(cls.runs, "v3.h5"), schema_version=3)
        with open(os.path.join(cls.runs, "readme.h5"), "w") as handle:
            handle.write("notes\n")
        cls.out = os.path.join(WORK, "mixed-report")
        cls.status, cls.stderr, cls.text = report(cls.runs, out=cls.out)

    def test_report_is_made_from_the_rest(self):
        self.assertEqual(self.status, 0, self.stderr)
        self.assertNotIn("Traceback", self.stderr)

    def test_each_problem_is_one_line_in_report_and_stderr(self):
        for name, words in (("v3.h5", "refused: schema_version 3"),
                            ("readme.h5", "not an HDF5 file"),
                            ("lost-var.h5", "job var is listed")):
            lines = [line for line in self.text.splitlines() if name in line and words in line]
            self.assertEqual(len(lines), 1, name)
            self.assertIn(words, self.stderr)

    def test_experiments_are_never_merged(self):
        self.assertIn("inputs mix 3 experiments", self.stderr)
        seed = rows(self.out, "seed")
        by_experiment = {}
        for row in seed:
            by_experiment.setdefault(row["experiment"], set()).add(row["tasks"])
        self.assertEqual(len(by_experiment), 3)
        self.assertTrue(all(len(tasks) == 1 for tasks in by_experiment.values()))

    def test_strong_and_weak_series(self):
        scaling = rows(self.out, "scaling")
        kinds = {row["scaling"] for row in scaling}
        self.assertEqual(kinds, {"strong", "weak"})
        weak = [r for r in scaling if r["scaling"] == "weak"]
        self.assertTrue(all(float(r["trades_per_rank"]) == 400.0 for r in weak))
        self.assertTrue(all(r["karp_flatt"] == "" for r in weak))

    def test_single_against_multi_node(self):
        nodes = rows(self.out, "nodes")
        self.assertTrue(nodes)
        for row in nodes:
            self.assertEqual(row["single"], "1 node × 4 ranks")
            self.assertEqual(row["multi"], "2 nodes × 4 ranks")
            ratio = float(row["multi_throughput_ops"]) / float(row["single_throughput_ops"])
            self.assertAlmostEqual(float(row["ratio"]), ratio)
            self.assertTrue(row["reading"])

    def test_findings_have_a_verdict_per_claim(self):
        findings = rows(self.out, "findings")
        self.assertGreaterEqual(len(findings), 6)
        judged = {"confirmed", "refuted", "nuanced"}
        self.assertTrue(all(f["verdict"] in judged for f in findings))


class Untested(unittest.TestCase):
    """A claim no run can test is marked so, with the run that would."""
    def test_claims_without_data_say_which_run_tests_them(self):
        runs = folder("var-only")
        synth.write_run(os.path.join(runs, "var.h5"), jobs=("var",), var=("sequential", "pool"))
        out = os.path.join(WORK, "var-only-report")
        status, stderr, _ = report(runs, out=out)
        self.assertEqual(status, 0, stderr)
        verdicts = {f["claim"]: f for f in rows(out, "findings")}
        settle = [f for claim, f in verdicts.items() if "(settle" in claim]
        self.assertTrue(settle)
        for finding in settle:
            self.assertEqual(finding["verdict"], "untested")
            self.assertIn("--jobs settle --strategies", finding["evidence"])
        tested = [f for claim, f in verdicts.items() if "(var" in claim]
        self.assertTrue(all(f["verdict"] != "untested" for f in tested))


class StackModes(unittest.TestCase):
    """Runs of one book with copied stacks and with stacks of their own are two
    experiments, never merged; a file from before the attribute counts as own stacks."""
    def test_modes_are_not_merged(self):
        runs = folder("modes")
        synth.write_run(os.path.join(runs, "copy.h5"), stack_mode="copy")
        synth.write_run(os.path.join(runs, "own.h5"), stack_mode="own", noise_seed=5)
        synth.write_run(os.path.join(runs, "old.h5"), noise_seed=9)
        out = os.path.join(WORK, "modes-report")
        status, stderr, text = report(runs, out=out)
        self.assertEqual(status, 0, stderr)
        self.assertIn("inputs mix 2 experiments", stderr)
        self.assertIn("copy stacks", stderr)
        by_experiment = {}
        for row in rows(out, "seed"):
            by_experiment.setdefault(row["experiment"], set()).add(row["tasks"])
        self.assertEqual(len(by_experiment), 2)


class Cpus(unittest.TestCase):
    """Runs of one book on different CPUs (model or instruction-set flags) are separate
    experiments, never merged; runs on the same CPU merge as before."""
    @staticmethod
    def _write(path, model, flags, noise_seed):
        synth.write_run(path, noise_seed=noise_seed)
        with h5py.File(path, "a") as f:
            f.attrs["cpu_model"], f.attrs["cpu_flags"] = model, flags

    def test_cpus_are_not_merged(self):
        runs = folder("cpus")
        self._write(os.path.join(runs, "a1.h5"), "CPU A", "sse2,avx2", 1)
        self._write(os.path.join(runs, "a2.h5"), "CPU A", "sse2,avx2", 2)
        self._write(os.path.join(runs, "b.h5"), "CPU B", "sse2,avx2,avx512f", 3)
        self._write(os.path.join(runs, "c.h5"), "CPU A", "sse2", 4)
        out = os.path.join(WORK, "cpus-report")
        status, stderr, _ = report(runs, out=out)
        self.assertEqual(status, 0, stderr)
        self.assertIn("inputs mix 3 experiments", stderr)
        self.assertIn("CPU B", stderr)
        self.assertIn("flags sse2 avx2 avx512f", stderr)
        files = {}
        for row in rows(out, "seed"):
            files.setdefault(row["experiment"], set()).add(row["tasks"])
        self.assertEqual(len(files), 3, "four files on three CPUs: a1 and a2 merge alone")


if __name__ == "__main__":
    os.makedirs(WORK, exist_ok=True)
    unittest.main()
