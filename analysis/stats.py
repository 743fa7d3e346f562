"""Statistics for loomdist runs: confidence intervals, scaling laws and the Amdahl fit.

Only the standard library and numpy are used, so the report runs where SciPy is not
installed; the Student-t quantile is computed here from the incomplete beta function.
"""
import math
from dataclasses import dataclass

import numpy as np

# JMH reports a 99.9% confidence interval; the seed studies' tables follow it.
CONFIDENCE = 0.999
# The rule everywhere in loomdist (console, HDF5 readers, this report): three or more
# iterations give an interval, fewer give none. Two samples leave one degree of freedom,
# where t(0.9995, 1) = 636.6 and the interval says nothing.
MIN_CI_SAMPLES = 3


def _beta_continued_fraction(a, b, x):
    """Evaluate the continued fraction of the incomplete beta function (modified Lentz),
    which converges quickly for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def regularized_beta(a, b, x):
    """I_x(a, b), the regularized incomplete beta function; the Student-t tail is one."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def student_t_upper_tail(t, df):
    """P(T > t) for t >= 0: computed directly so that tails near 1e-4 keep their digits."""
    return 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))


def student_t_quantile(p, df):
    """The t with P(T <= t) = p, for 0.5 <= p < 1, found by bisection on the upper tail,
    which is monotone, so the search cannot miss."""
    if not 0.5 <= p < 1.0 or df < 1:
        raise ValueError(f"t quantile needs 0.5 <= p < 1 and df >= 1, got p={p}, df={df}")
    tail = 1.0 - p
    low, high = 0.0, 1.0
    while student_t_upper_tail(high, df) > tail:
        high *= 2.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if student_t_upper_tail(mid, df) > tail:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * high:
            break
    return 0.5 * (low + high)


def mean_ci(samples, confidence=CONFIDENCE):
    """Mean and Student-t half-width of a sample, as JMH reports iterations; the
    half-width is None below MIN_CI_SAMPLES samples."""
    values = np.asarray(samples, dtype=float)
    mean = float(values.mean())
    if values.size < MIN_CI_SAMPLES:
        return mean, None
    sem = float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, student_t_quantile(0.5 + confidence / 2.0, values.size - 1) * sem


def makespans_ns(wall_ns):
    """Each iteration's makespan: ranks start together at a barrier, so the iteration
    lasts as long as its slowest rank."""
    return np.asarray(wall_ns, dtype=float).max(axis=1)


def imbalance(wall_ns):
    """Load imbalance, max/average of per-rank wall time, averaged over iterations:
    1.0 is a perfect split, 2.0 means the slowest rank took twice the average."""
    wall = np.asarray(wall_ns, dtype=float)
    return float((wall.max(axis=1) / wall.mean(axis=1)).mean())


def speedup(base_time, base_tasks, time, tasks):
    """Speedup as the ratio of throughputs. For strong scaling (same tasks) it is the
    plain time ratio; for weak scaling (same tasks per rank) it is Gustafson's scaled
    speedup, so one definition serves both."""
    return (tasks / time) / (base_tasks / base_time)


def efficiency(speedup_value, relative_ranks):
    """Parallel efficiency: the share of the ideal linear speedup actually reached."""
    return speedup_value / relative_ranks


def karp_flatt(speedup_value, relative_ranks):
    """The Karp-Flatt experimentally determined serial fraction
    e = (1/S - 1/p) / (1 - 1/p); undefined at p = 1, where there is nothing to compare.
    A fraction that grows with p points at overhead rather than inherent serial work."""
    if relative_ranks <= 1.0:
        return None
    return (1.0 / speedup_value - 1.0 / relative_ranks) / (1.0 - 1.0 / relative_ranks)


@dataclass
class AmdahlFit:
    """Amdahl's law T(p) = T1 * (s + (1 - s) / p) fitted to measured times."""
    serial_fraction: float
    base_time: float
    rms_residual: float
    points: int


def amdahl_fit(ranks, times):
    """Least-squares fit of T(p) = a + b/p (linear in a and b), from which T1 = a + b and
    s = a / T1. Needs three distinct p: two points fit any curve exactly and prove
    nothing. Returns None when there are fewer."""
    p = np.asarray(ranks, dtype=float)
    t = np.asarray(times, dtype=float)
    if np.unique(p).size < 3:
        return None
    design = np.column_stack([np.ones_like(p), 1.0 / p])
    (a, b), *_ = np.linalg.lstsq(design, t, rcond=None)
    residual = t - design @ np.array([a, b])
    base = float(a + b)
    return AmdahlFit(serial_fraction=float(a / base), base_time=base,
                     rms_residual=float(np.sqrt(np.mean(residual ** 2))), points=int(p.size))
