"""The claims registry (claims.json) and the measures it names, taken from a sitting.

A sitting's data is {arm: {"strategies": {strategy: {metric: [one value per
iteration]}}}}. A measure names "arm/strategy/metric" paths into it; measure() turns
one into a verdicts.Estimate, and judge_all() gives every claim of a study its verdict.
"""
import json
import os
from dataclasses import dataclass

from . import verdicts

REGISTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "claims.json")
FIELDS = ("id", "study", "seed", "claim", "seed_figure", "arms", "measure", "rule")


class RegistryError(Exception):
    """A registry entry that lacks a field or names an unknown rule."""


def load(path=REGISTRY):
    """The registry, checked: every claim has every field, a known rule, and a measure
    unless it is not applicable (then a reason)."""
    with open(path) as f:
        reg = json.load(f)
    seen = set()
    for c in reg["claims"]:
        missing = [k for k in FIELDS if k not in c]
        if missing:
            raise RegistryError(f"claim {c.get('id', '?')}: no {', '.join(missing)}")
        if c["id"] in seen:
            raise RegistryError(f"claim {c['id']} twice")
        seen.add(c["id"])
        if c["study"] not in reg["studies"]:
            raise RegistryError(f"claim {c['id']}: unknown study {c['study']}")
        kind = c["rule"]["kind"]
        if kind == "not_applicable":
            if not c["rule"].get("reason"):
                raise RegistryError(f"claim {c['id']}: not applicable without a reason")
        elif kind not in ("figure", "tie", "at_most", "at_least") or c["measure"] is None:
            raise RegistryError(f"claim {c['id']}: rule {kind} needs a measure")
    return reg


def samples(data, path):
    """The per-iteration values at arm/strategy/metric, or None where the arm, the
    strategy or the metric is absent."""
    arm, strategy, metric = path.split("/")
    try:
        return data[arm]["strategies"][strategy][metric]
    except KeyError:
        return None


def _ratio(data, num, den, exact):
    a, b = samples(data, num), samples(data, den)
    if a is None or b is None:
        return None
    return verdicts.ratio_estimate(a, b, exact)


def measure(spec, data):
    """The Estimate a registry measure gives on a sitting's data, or None."""
    kind, exact = spec["kind"], spec.get("exact", False)
    if kind == "ratio":
        return _ratio(data, spec["num"], spec["den"], exact)
    if kind == "value":
        values = samples(data, spec["of"])
        return None if values is None else verdicts.mean_estimate(values, exact)
    arm, metric = spec["arm"], spec["metric"]
    means = {}
    for s in spec["strategies"]:
        values = samples(data, f"{arm}/{s}/{metric}")
        if values:
            means[s] = sum(values) / len(values)
    if not means:
        return None
    if kind == "spread":
        high, low = max(means, key=means.get), min(means, key=means.get)
        return _ratio(data, f"{arm}/{high}/{metric}", f"{arm}/{low}/{metric}", exact)
    if kind == "speedup_best":
        best = min(means, key=means.get)
        return _ratio(data, f"{arm}/{spec['base']}/{metric}", f"{arm}/{best}/{metric}", exact)
    raise RegistryError(f"unknown measure kind {kind!r}")


@dataclass
class Judged:
    claim: dict
    estimate: object
    verdict: verdicts.Verdict


def judge_all(reg, study, data, context):
    """Every claim of a study, measured on the data and judged by its rule."""
    out = []
    for c in reg["claims"]:
        if c["study"] != study:
            continue
        est = None if c["measure"] is None else measure(c["measure"], data)
        out.append(Judged(c, est, verdicts.judge(c["rule"], est, context)))
    return out
