"""Unit checks of analysis.stats against values known in closed form or from tables."""
import math
import unittest

import numpy as np

from analysis import stats


class StudentT(unittest.TestCase):
    def test_known_quantiles(self):
        # Published two-sided 99.9% critical values.
        for df, value in ((2, 31.599), (4, 8.610), (9, 4.781), (30, 3.646)):
            self.assertAlmostEqual(stats.student_t_quantile(0.9995, df), value, places=3)

    def test_one_degree_of_freedom_is_cauchy(self):
        for p in (0.75, 0.975, 0.9995):
            self.assertAlmostEqual(stats.student_t_quantile(p, 1),
                                   math.tan(math.pi * (p - 0.5)), delta=1e-7)

    def test_large_df_tends_to_normal(self):
        self.assertAlmostEqual(stats.student_t_quantile(0.9995, 10**7), 3.2905267, places=5)
        self.assertAlmostEqual(stats.student_t_quantile(0.975, 10**7), 1.9599640, places=5)

    def test_median_and_bad_arguments(self):
        self.assertAlmostEqual(stats.student_t_quantile(0.5, 3), 0.0, places=12)
        with self.assertRaises(ValueError):
            stats.student_t_quantile(1.0, 3)
        with self.assertRaises(ValueError):
            stats.student_t_quantile(0.9, 0)

    def test_agrees_with_scipy(self):
        # SciPy is the reference, installed with the test packages (scripts/setup
        # --test: python3-scipy): its absence fails the test rather than skip the one
        # comparison with an independent implementation.
        try:
            from scipy import stats as reference
        except ImportError:
            self.fail("SciPy is not installed: apt-get install python3-scipy "
                      "(scripts/setup --test)")
        for df in (1, 2, 3, 5, 8, 13, 21, 34, 55, 100, 1000):
            for p in (0.9, 0.975, 0.995, 0.9995):
                self.assertAlmostEqual(stats.student_t_quantile(p, df) / reference.t.ppf(p, df),
                                       1.0, delta=1e-8)

    def test_regularized_beta(self):
        self.assertAlmostEqual(stats.regularized_beta(1, 1, 0.3), 0.3, places=12)
        self.assertAlmostEqual(stats.regularized_beta(2.5, 2.5, 0.5), 0.5, places=12)
        # I_x(a, 1) = x^a
        self.assertAlmostEqual(stats.regularized_beta(3, 1, 0.7), 0.7 ** 3, places=12)


class Intervals(unittest.TestCase):
    def test_one_sample_has_no_interval(self):
        self.assertEqual(stats.mean_ci([5.0]), (5.0, None))

    def test_two_samples_have_no_interval(self):
        # The rule everywhere: 3 or more iterations give a 99.9% CI, fewer give none.
        self.assertEqual(stats.mean_ci([1.0, 2.0]), (1.5, None))
        self.assertEqual(stats.MIN_CI_SAMPLES, 3)

    def test_three_samples(self):
        mean, half = stats.mean_ci([1.0, 2.0, 3.0])
        self.assertEqual(mean, 2.0)
        expected = stats.student_t_quantile(0.9995, 2) / math.sqrt(3)
        self.assertAlmostEqual(half, expected, places=9)

    def test_constant_samples_have_zero_width(self):
        self.assertEqual(stats.mean_ci([4.0, 4.0, 4.0, 4.0]), (4.0, 0.0))


class Scaling(unittest.TestCase):
    def test_makespan_and_imbalance(self):
        wall = [[10, 10], [10, 30]]
        self.assertEqual(list(stats.makespans_ns(wall)), [10.0, 30.0])
        self.assertAlmostEqual(stats.imbalance(wall), (1.0 + 1.5) / 2)

    def test_strong_and_weak_speedup(self):
        self.assertAlmostEqual(stats.speedup(100.0, 400, 25.0, 400), 4.0)
        # Weak: twice the tasks in the same time is a scaled speedup of 2.
        self.assertAlmostEqual(stats.speedup(100.0, 400, 100.0, 800), 2.0)
        self.assertAlmostEqual(stats.efficiency(3.0, 4.0), 0.75)

    def test_karp_flatt(self):
        self.assertIsNone(stats.karp_flatt(1.0, 1.0))
        self.assertAlmostEqual(stats.karp_flatt(4.0, 4.0), 0.0)
        self.assertAlmostEqual(stats.karp_flatt(1.0, 4.0), 1.0)
        # Under Amdahl's law Karp-Flatt recovers the serial fraction at every p.
        for s in (0.05, 0.3):
            for p in (2.0, 8.0, 64.0):
                self.assertAlmostEqual(stats.karp_flatt(1.0 / (s + (1 - s) / p), p), s)


class Amdahl(unittest.TestCase):
    def test_exact_data(self):
        p = np.array([1, 2, 4, 8, 16])
        fit = stats.amdahl_fit(p, 250.0 * (0.2 + 0.8 / p))
        self.assertAlmostEqual(fit.serial_fraction, 0.2, places=10)
        self.assertAlmostEqual(fit.base_time, 250.0, places=8)
        self.assertLess(fit.rms_residual, 1e-9)
        self.assertEqual(fit.points, 5)

    def test_noisy_data(self):
        rng = np.random.default_rng(7)
        p = np.repeat([1, 2, 4, 8], 5)
        times = 100.0 * (0.1 + 0.9 / p) * rng.normal(1.0, 0.01, p.size)
        fit = stats.amdahl_fit(p, times)
        self.assertAlmostEqual(fit.serial_fraction, 0.1, delta=0.02)
        self.assertAlmostEqual(fit.base_time, 100.0, delta=2.0)
        self.assertGreater(fit.rms_residual, 0.0)

    def test_needs_three_rank_counts(self):
        self.assertIsNone(stats.amdahl_fit([1, 2, 2, 1], [10.0, 6.0, 6.1, 9.9]))


if __name__ == "__main__":
    unittest.main()
