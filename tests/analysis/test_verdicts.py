"""The verdict rules (analysis/verdicts.py) on made-up data: each rule gives each of its
verdicts, and the estimators give the intervals they promise. Also the registry's
shape: every claim has a rule, and every not-applicable one a reason."""
import math
import unittest

from analysis import claims, verdicts
from analysis.verdicts import Estimate, judge

FIGURE = {"kind": "figure", "seed": 1.135, "null": 1.0, "tolerance": 0.5,
          "equivalence": 0.05}


def est(lo, hi):
    return Estimate((lo + hi) / 2, lo, hi, 5, "t")


class FigureRule(unittest.TestCase):
    """A claimed effect (pooling's +13.5%): band 1.0675-1.2025 around it, null 1."""

    def test_confirmed_when_interval_reaches_the_figure_and_excludes_none(self):
        self.assertEqual(judge(FIGURE, est(1.10, 1.16)).verdict, "confirmed")

    def test_refuted_when_interval_excludes_the_figure(self):
        v = judge(FIGURE, est(1.30, 1.40))
        self.assertEqual(v.verdict, "refuted")
        self.assertIn("direction holds", v.reason)

    def test_refuted_when_direction_reversed(self):
        v = judge(FIGURE, est(0.80, 0.90))
        self.assertEqual(v.verdict, "refuted")
        self.assertIn("reversed", v.reason)

    def test_no_difference_inside_the_equivalence_bound(self):
        self.assertEqual(judge(FIGURE, est(0.97, 1.04)).verdict, "no difference")

    def test_inconclusive_when_interval_holds_the_figure_and_none(self):
        # +-13% around 1.02: an effect of the seed's size cannot be resolved.
        v = judge(FIGURE, est(0.89, 1.15))
        self.assertEqual(v.verdict, "inconclusive")
        self.assertIn("too wide", v.reason)

    def test_no_interval_is_inconclusive_never_a_side(self):
        self.assertEqual(judge(FIGURE, Estimate(2.0, None, None, 1, "t")).verdict,
                         "inconclusive")
        self.assertEqual(judge(FIGURE, None).verdict, "inconclusive")

    def test_figure_without_null(self):
        rule = {"kind": "figure", "seed": 1.0, "null": None, "tolerance": 0.5}
        self.assertEqual(judge(rule, est(0.9, 1.2)).verdict, "confirmed")
        self.assertEqual(judge(rule, est(60, 70)).verdict, "refuted")
        self.assertEqual(judge(rule, est(0.1, 5.0)).verdict, "inconclusive")

    def test_effect_below_null(self):
        rule = {"kind": "figure", "seed": 0.5, "null": 1.0, "tolerance": 0.5}
        self.assertEqual(judge(rule, est(0.45, 0.6)).verdict, "confirmed")
        self.assertEqual(judge(rule, est(1.1, 1.3)).verdict, "refuted")
        self.assertEqual(judge(rule, est(0.6, 1.2)).verdict, "inconclusive")


class TieRule(unittest.TestCase):
    RULE = {"kind": "tie", "null": 1.0, "equivalence": 0.10}

    def test_no_difference(self):
        self.assertEqual(judge(self.RULE, est(0.95, 1.08)).verdict, "no difference")

    def test_refuted(self):
        self.assertEqual(judge(self.RULE, est(1.5, 2.1)).verdict, "refuted")

    def test_inconclusive(self):
        self.assertEqual(judge(self.RULE, est(0.95, 1.3)).verdict, "inconclusive")


class BoundRules(unittest.TestCase):
    def test_at_most(self):
        rule = {"kind": "at_most", "bound": "cpus"}
        ctx = {"cpus": 2}
        self.assertEqual(judge(rule, est(1.7, 1.95), ctx).verdict, "confirmed")
        self.assertEqual(judge(rule, est(2.2, 2.5), ctx).verdict, "refuted")
        self.assertEqual(judge(rule, est(1.8, 2.3), ctx).verdict, "inconclusive")

    def test_at_least(self):
        rule = {"kind": "at_least", "bound": 1.25}
        self.assertEqual(judge(rule, est(2.0, 3.0)).verdict, "confirmed")
        self.assertEqual(judge(rule, est(0.9, 1.1)).verdict, "refuted")
        self.assertEqual(judge(rule, est(1.0, 1.5)).verdict, "inconclusive")

    def test_not_applicable_gives_its_reason(self):
        v = judge({"kind": "not_applicable", "reason": "no GC"}, None)
        self.assertEqual((v.verdict, v.reason), ("not applicable", "no GC"))


class Estimators(unittest.TestCase):
    def test_mean_interval_is_student_t(self):
        e = verdicts.mean_estimate([1.0, 2.0, 3.0])
        half = 4.302653 * 1.0 / math.sqrt(3)  # t(0.975, 2) * s / sqrt(n)
        self.assertAlmostEqual(e.hi - e.value, half, places=4)

    def test_exact_counts_take_their_range(self):
        e = verdicts.mean_estimate([3, 5, 4], exact=True)
        self.assertEqual((e.lo, e.hi), (3.0, 5.0))
        r = verdicts.ratio_estimate([200, 203], [5, 5], exact=True)
        self.assertEqual((r.lo, r.hi), (40.0, 40.6))

    def test_ratio_and_its_inverse_get_the_same_verdict(self):
        a, b = [10.0, 11.0, 10.5, 9.8], [5.0, 5.5, 5.2, 4.9]
        r, inv = verdicts.ratio_estimate(a, b), verdicts.ratio_estimate(b, a)
        self.assertAlmostEqual(r.lo * inv.hi, 1.0, places=9)
        self.assertAlmostEqual(r.hi * inv.lo, 1.0, places=9)
        self.assertTrue(r.lo < 2.0 < r.hi or abs(r.value - 2.0) < 0.1)

    def test_one_sample_has_no_interval(self):
        self.assertIsNone(verdicts.ratio_estimate([1.0], [2.0, 2.1]).lo)


class Rounds(unittest.TestCase):
    def test_merged_rounds_combine_their_iterations(self):
        from analysis import study_arms
        a = {"command": "c", "strategies": {"x": {"rps": [1.0, 2.0]}}}
        b = {"command": "c", "strategies": {"x": {"rps": [3.0]}, "y": {"rps": [4.0]}}}
        m = study_arms.merge(a, b)
        self.assertEqual(m["strategies"]["x"]["rps"], [1.0, 2.0, 3.0])
        self.assertEqual(m["strategies"]["y"]["rps"], [4.0])
        self.assertEqual(m["rounds"], 2)

    def test_killed_and_unserved_runs_are_no_rate(self):
        """A pool run killed at its bound, or never reached by the load, keeps its
        counters and peak; its rate is withdrawn, so a ratio over an arm of such runs
        has no measurement rather than a rate of 0."""
        from analysis import study_arms
        arms = {"tight": {"strategies": {"fresh": {
            "rps": [0.0, 0.0, 900.0], "killed": [1.0, 0.0, 0.0],
            "unserved": [0.0, 1.0, 0.0], "cgroup_peak_mib": [100.0, 90.0, 80.0]}}}}
        m = study_arms.served(arms)["tight"]["strategies"]["fresh"]
        self.assertEqual(m["rps"], [None, None, 900.0])
        self.assertEqual(m["cgroup_peak_mib"], [100.0, 90.0, 80.0])
        self.assertEqual(m["killed"], [1.0, 0.0, 0.0])
        dead = {"t": {"strategies": {"x": {"rps": [0.0, 0.0], "killed": [1.0, 1.0],
                                           "unserved": [0.0, 0.0]}}},
                "l": {"strategies": {"x": {"rps": [5.0, 6.0], "killed": [0.0, 0.0],
                                           "unserved": [0.0, 0.0]}}}}
        e = claims.measure({"kind": "ratio", "num": "t/x/rps", "den": "l/x/rps"},
                           study_arms.served(dead))
        self.assertEqual(judge(FIGURE, e).verdict, "inconclusive")


class Registry(unittest.TestCase):
    def test_every_claim_is_judgeable(self):
        reg = claims.load()
        ids = [c["id"] for c in reg["claims"]]
        self.assertEqual(len(ids), len(set(ids)))
        for c in reg["claims"]:
            if c["rule"]["kind"] == "not_applicable":
                self.assertTrue(c["rule"]["reason"])
            else:
                self.assertIsNotNone(c["measure"])
        for seed in ("000", "002", "004", "design"):
            self.assertTrue(any(c["seed"] == seed for c in reg["claims"]), seed)

    def test_measures_read_the_sitting(self):
        data = {"a": {"strategies": {"x": {"m": [2.0, 2.2, 2.1]},
                                     "y": {"m": [1.0, 1.1, 1.05]}}}}
        e = claims.measure({"kind": "ratio", "num": "a/x/m", "den": "a/y/m"}, data)
        self.assertAlmostEqual(e.value, 2.0, places=6)
        best = claims.measure({"kind": "speedup_best", "arm": "a", "base": "x",
                               "strategies": ["y"], "metric": "m"}, data)
        self.assertAlmostEqual(best.value, 2.0, places=6)
        self.assertIsNone(claims.measure({"kind": "value", "of": "a/z/m"}, data))


if __name__ == "__main__":
    unittest.main()
