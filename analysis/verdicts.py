"""The rules that turn a measured interval into a verdict on a seed study's claim.

Every verdict rests on an interval, never on a mean alone. The five verdicts:

- *confirmed*: the interval agrees with the claim (it reaches the seed's figure, within
  the registry's tolerance, and excludes no effect at all; or it lies inside a bound the
  claim states);
- *refuted*: the interval excludes the seed's figure or its direction, or lies wholly
  beyond a bound the claim states;
- *no difference*: the interval lies inside the equivalence bound the registry states
  around "no effect"; a claim of a tie is upheld this way, a claimed effect denied;
- *inconclusive*: the interval is too wide to tell an effect of the seed's size from
  none (or there is no interval: fewer than two samples, or the arm did not run); the
  verdict takes no side and quotes the interval;
- *not applicable*: the C re-creation cannot test the claim (a garbage collector, a JIT
  tier, a figure that is an input here); the registry gives the reason.

Intervals are two-sided Student-t at CONFIDENCE. A ratio of two means takes its
interval on the log scale (the delta method, Welch's degrees of freedom), so a ratio and
its inverse get the same verdict. A count that is exact (threads, bytes allocated)
takes the range its values spanned, not a t-interval.
"""
import math
from dataclasses import dataclass

import numpy as np

from .stats import student_t_quantile

CONFIDENCE = 0.95
VERDICTS = ("confirmed", "refuted", "no difference", "inconclusive", "not applicable")


@dataclass(frozen=True)
class Estimate:
    """A measured figure and its interval; lo and hi are None where there is none."""
    value: float
    lo: object
    hi: object
    n: int
    method: str

    def text(self, fmt="{:.3g}"):
        """'v [lo, hi]', or 'v (no interval, n=1)'."""
        if self.lo is None:
            return f"{fmt.format(self.value)} (no interval, n={self.n})"
        return f"{fmt.format(self.value)} [{fmt.format(self.lo)}, {fmt.format(self.hi)}]"


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str


def _samples(values):
    """Finite floats of a list, as a numpy array."""
    a = np.asarray([v for v in values if v is not None], dtype=float)
    return a[np.isfinite(a)]


def mean_estimate(values, exact=False):
    """The mean with its t-interval, or, for an exact count, the range it spanned."""
    a = _samples(values)
    if a.size == 0:
        return None
    mean = float(a.mean())
    if exact:
        return Estimate(mean, float(a.min()), float(a.max()), int(a.size), "range")
    if a.size < 2:
        return Estimate(mean, None, None, int(a.size), "t")
    half = student_t_quantile(0.5 + CONFIDENCE / 2, a.size - 1) * float(a.std(ddof=1)) \
        / math.sqrt(a.size)
    return Estimate(mean, mean - half, mean + half, int(a.size), "t")


def ratio_estimate(num, den, exact=False):
    """mean(num) / mean(den) with its interval: on the log scale by the delta method and
    Welch's degrees of freedom; for exact counts, the ratio's range over the values."""
    a, b = _samples(num), _samples(den)
    if a.size == 0 or b.size == 0 or b.mean() <= 0:
        return None
    ma, mb = float(a.mean()), float(b.mean())
    value = ma / mb
    if exact:
        if b.min() <= 0:
            return Estimate(value, None, None, int(min(a.size, b.size)), "range")
        return Estimate(value, float(a.min() / b.max()), float(a.max() / b.min()),
                        int(min(a.size, b.size)), "range")
    if a.size < 2 or b.size < 2 or ma <= 0:
        return Estimate(value, None, None, int(min(a.size, b.size)), "log-t")
    va = float(a.var(ddof=1)) / (a.size * ma * ma)
    vb = float(b.var(ddof=1)) / (b.size * mb * mb)
    se2 = va + vb
    if se2 == 0:
        return Estimate(value, value, value, int(min(a.size, b.size)), "log-t")
    df = se2 * se2 / (va * va / (a.size - 1) + vb * vb / (b.size - 1))
    half = student_t_quantile(0.5 + CONFIDENCE / 2, max(1.0, df)) * math.sqrt(se2)
    return Estimate(value, value * math.exp(-half), value * math.exp(half),
                    int(min(a.size, b.size)), "log-t")


def _fmt(x):
    return f"{x:.3g}"


def _band(rule):
    """The seed's figure widened by the registry's tolerance: on the effect (seed minus
    null) where the claim has a null, else on the figure itself."""
    seed, tol, null = rule["seed"], rule.get("tolerance", 0.0), rule.get("null")
    if null is None:
        return seed - tol * abs(seed), seed + tol * abs(seed)
    effect = seed - null
    low, high = null + effect * (1 - tol), null + effect * (1 + tol)
    return min(low, high), max(low, high)


def _within_equivalence(rule, est):
    """Whether the interval lies inside null +- the registry's equivalence bound."""
    eq, null = rule.get("equivalence"), rule.get("null")
    if eq is None or null is None:
        return False
    return null - eq <= est.lo and est.hi <= null + eq


def _figure(rule, est):
    """A claimed figure (and, with a null, the direction of its effect)."""
    low, high = _band(rule)
    null = rule.get("null")
    band = f"the seed's {_fmt(rule['seed'])} (band {_fmt(low)} to {_fmt(high)})"
    if _within_equivalence(rule, est):
        return Verdict("no difference", f"interval inside {_fmt(null)} +- "
                       f"{_fmt(rule['equivalence'])}: no effect, {band} excluded")
    if null is not None:
        up = rule["seed"] > null
        if (up and est.hi < null) or (not up and est.lo > null):
            return Verdict("refuted", f"interval on the other side of {_fmt(null)} from "
                           f"{band}: the direction is reversed")
    if est.hi < low or est.lo > high:
        same = null is not None and ((rule["seed"] > null and est.lo > null)
                                     or (rule["seed"] < null and est.hi < null))
        return Verdict("refuted", f"interval excludes {band}"
                       + ("; the direction holds" if same else ""))
    if null is not None and est.lo <= null <= est.hi:
        return Verdict("inconclusive", f"interval holds both {band} and no effect "
                       f"({_fmt(null)}): too wide to tell them apart")
    if null is None and est.lo < low and est.hi > high:
        return Verdict("inconclusive", f"interval wider than {band} on both sides")
    return Verdict("confirmed", f"interval reaches {band}"
                   + (f" and excludes no effect ({_fmt(null)})" if null is not None else ""))


def _tie(rule, est):
    """A claimed absence of difference: inside null +- equivalence, or not."""
    null, eq = rule["null"], rule["equivalence"]
    if null - eq <= est.lo and est.hi <= null + eq:
        return Verdict("no difference", f"interval inside {_fmt(null)} +- {_fmt(eq)}, "
                       "as the claim says")
    if est.hi < null - eq or est.lo > null + eq:
        return Verdict("refuted", f"interval wholly outside {_fmt(null)} +- {_fmt(eq)}: "
                       "a difference the seed denies")
    return Verdict("inconclusive", f"interval crosses the bound {_fmt(null)} +- {_fmt(eq)}")


def _bound(rule, est, bound):
    """A one-sided claim: the figure at most (or at least) a bound."""
    most = rule["kind"] == "at_most"
    word = "at most" if most else "at least"
    inside = est.hi <= bound if most else est.lo >= bound
    outside = est.lo > bound if most else est.hi < bound
    if inside:
        return Verdict("confirmed", f"interval {word} {_fmt(bound)}")
    if outside:
        return Verdict("refuted", f"interval wholly beyond {_fmt(bound)}, which the claim "
                       f"puts {word}")
    return Verdict("inconclusive", f"interval straddles {_fmt(bound)}")


def judge(rule, est, context=None):
    """The verdict of a rule (a registry entry's "rule") on an Estimate. context maps
    names a bound may use ("cpus") to this sitting's values."""
    kind = rule["kind"]
    if kind == "not_applicable":
        return Verdict("not applicable", rule["reason"])
    if est is None:
        return Verdict("inconclusive", "no measurement: the arm did not run, or none of "
                       "its runs served to the end (each killed at its memory bound, or "
                       "never reached by the load)")
    if est.lo is None:
        return Verdict("inconclusive", f"no interval from n={est.n}")
    if kind == "figure":
        return _figure(rule, est)
    if kind == "tie":
        return _tie(rule, est)
    if kind in ("at_most", "at_least"):
        bound = rule["bound"]
        if isinstance(bound, str):
            bound = (context or {})[bound]
        return _bound(rule, est, float(bound))
    raise ValueError(f"unknown rule kind {kind!r}")


def describe(rule):
    """The rule in words, for the verdicts table."""
    kind = rule["kind"]
    if kind == "not_applicable":
        return "not testable here"
    if kind == "figure":
        low, high = _band(rule)
        text = f"figure {_fmt(rule['seed'])}, band {_fmt(low)}-{_fmt(high)}"
        if rule.get("null") is not None:
            text += f", null {_fmt(rule['null'])}"
        if rule.get("equivalence") is not None:
            text += f", equivalence +-{_fmt(rule['equivalence'])}"
        return text
    if kind == "tie":
        return f"tie: {_fmt(rule['null'])} +-{_fmt(rule['equivalence'])}"
    word = "<=" if kind == "at_most" else ">="
    return f"{word} {rule['bound']}"
