"""The seed studies' claims, each judged against the measured runs.

Every claim compares strategies within one run, so a verdict never mixes books or
layouts. Each layout that ran both sides is one piece of evidence, and it supports the
claim, contradicts it, or neither. A difference inside the 99.9% intervals is taken as
noise: it neither supports nor contradicts. The claim is confirmed when every layout
supports it, refuted when every layout contradicts it, and nuanced otherwise. A claim no
run can test says which run would.
"""
import math
from dataclasses import dataclass

# The seed settled 8,000 trades on a 200-thread pool: 40 trades per pool thread.
SEED_TRADES_PER_POOL_THREAD = 40
# A pool of P threads given q trades each queues them in about q waves, so green threads
# cannot beat it by much more than q: below this many, ~15x is out of reach.
WAVES_FOR_15X = 10
# Timings closer than this are a tie: iteration noise on a shared machine is larger.
TIE = 0.10
# A speedup may exceed the CPU count by this much before it counts as beating it.
CORE_SLACK = 1.05
LISTED = 3


@dataclass
class Finding:
    """One claim, what the runs measured about it, and the verdict."""
    claim: str
    evidence: str
    verdict: str


@dataclass
class Point:
    """One layout's evidence: the measured value and where it places the claim."""
    where: str
    value: float
    mark: object  # True supports, False contradicts, None neither
    noisy: bool = False


def _ratio(a, b):
    """a/b, infinite where b is zero, so a degenerate run reads as extreme, not a crash."""
    return a / b if b > 0 else math.inf


def _apart(a, b):
    """Whether two (mean, half-width) estimates differ beyond their intervals. With
    fewer than three iterations there is no interval, and the means are taken as they
    are."""
    if a[1] is None or b[1] is None:
        return True
    return a[0] - a[1] > b[0] + b[1] or b[0] - b[1] > a[0] + a[1]


def _point(where, value, mark, significant=True):
    """A layout's evidence; a mark that rests on a difference the intervals do not
    separate is withheld as noise."""
    if mark is not None and not significant:
        return Point(where, value, None, noisy=True)
    return Point(where, value, mark)


def _verdict(points):
    """All layouts support: confirmed; all contradict: refuted; anything else: nuanced."""
    marks = [p.mark for p in points]
    if marks and all(m is True for m in marks):
        return "confirmed"
    if marks and all(m is False for m in marks):
        return "refuted"
    return "nuanced"


def _listing(label, points, unit="x"):
    """'label: v (layout), ...', or the range when many layouts ran."""
    if len(points) <= LISTED:
        return f"{label}: " + ", ".join(f"{p.value:.2f}{unit} ({p.where})" for p in points)
    low, high = min(points, key=lambda p: p.value), max(points, key=lambda p: p.value)
    return (f"{label}: {low.value:.2f}{unit} ({low.where}) to {high.value:.2f}{unit} "
            f"({high.where}) over {len(points)} layouts")


def _noise_note(points):
    """Say how many layouts were too noisy to count, and how to fix that."""
    noisy = sum(p.noisy for p in points)
    if not noisy:
        return ""
    return (f"; {noisy} of {len(points)} layouts too noisy to tell at 99.9% "
            f"(more --iterations narrow the intervals)")


def _finding(claim, label, points, extra=""):
    """The finding from its points, listed under label."""
    return Finding(claim, _listing(label, points) + extra + _noise_note(points),
                   _verdict(points))


def _pairs(layouts, job, first, second):
    """(where, summary of first, summary of second) for each layout that ran both."""
    return [(where, c.summaries[(job, first)], c.summaries[(job, second)])
            for where, c in layouts
            if (job, first) in c.summaries and (job, second) in c.summaries]


def _untested(claim, job, strategies):
    """A claim no run can judge, with the run that would judge it."""
    return Finding(claim, f"untested: no run has {job} {' and '.join(strategies)} together; "
                   f"a run with --jobs {job} --strategies {','.join(strategies)} tests it",
                   "untested")


def _pool_point(where, green, pool):
    """Green over pool throughput, judged against what the pool's queueing allows: with
    q trades per pool thread the gap cannot much exceed q, so a layout with q <= 1 cannot
    test the claim at all, and one with q < 10 can only show that green failed to win."""
    ratio = _ratio(green.throughput[0], pool.throughput[0])
    waves = pool.trades / pool.ranks / pool.threads if pool.threads > 0 else math.inf
    if waves <= 1:
        return Point(where, ratio, None)
    if ratio <= 1.0 + TIE:
        return Point(where, ratio, False)
    if waves >= WAVES_FOR_15X and 10.0 <= ratio <= 22.5:
        return Point(where, ratio, True)
    return Point(where, ratio, None)


def green_vs_pool(layouts):
    """Settle throughput of green threads over the OS thread pool."""
    claim = "Virtual threads are ~15x faster than a 200-thread pool (settle)"
    pairs = _pairs(layouts, "settle", "green", "threads")
    if not pairs:
        return _untested(claim, "settle", ["threads", "green"])
    points = [_pool_point(w, g, t) for w, g, t in pairs]
    per_thread = [t.trades / t.ranks / t.threads for _, _, t in pairs if t.threads > 0]
    extra = ""
    if per_thread:
        extra = (f"; {min(per_thread):g} to {max(per_thread):g} trades per pool thread here "
                 f"against the seed's {SEED_TRADES_PER_POOL_THREAD}, and the gap cannot much "
                 f"exceed that")
        if min(per_thread) < WAVES_FOR_15X:
            _, _, t = min(pairs, key=lambda p: p[2].ranks)
            extra += (f"; --trades {SEED_TRADES_PER_POOL_THREAD * t.threads * t.ranks} at "
                      f"{t.ranks} rank{'s' if t.ranks != 1 else ''} matches the seed")
    return _finding(claim, "green/threads throughput", points, extra)


def pinning_collapses(layouts):
    """Settle throughput of green-pinned over green, and whether any trade failed for it."""
    claim = "Pinning silently collapses concurrency (settle green-pinned against green)"
    pairs = _pairs(layouts, "settle", "green-pinned", "green")
    if not pairs:
        return _untested(claim, "settle", ["green", "green-pinned"])
    points = []
    for w, p, g in pairs:
        ratio = _ratio(p.throughput[0], g.throughput[0])
        if ratio <= 0.5:
            points.append(_point(w, ratio, True, _apart(p.throughput, g.throughput)))
        else:
            points.append(Point(w, ratio, False if ratio >= 1.0 - TIE else None))
    silent = all(p.settled == g.settled for _, p, g in pairs)
    kept = sorted({s.kept_text for _, p, g in pairs for s in (p, g)})
    extra = ("; both settled the same trades, so no error reports the loss" if silent
             else "; the settled counts differ, so the loss is not silent")
    extra += f" (settled counts from the per-trade columns of {'; '.join(kept)})"
    return _finding(claim, "green-pinned/green throughput", points, extra)


def pinned_faster(layouts):
    """The seed saw pinned runs finish first; here, green time over green-pinned time."""
    claim = "With pinning ran faster than plain virtual threads (settle)"
    pairs = _pairs(layouts, "settle", "green-pinned", "green")
    if not pairs:
        return _untested(claim, "settle", ["green", "green-pinned"])
    points = []
    for w, p, g in pairs:
        ratio = _ratio(g.time_ms[0], p.time_ms[0])
        mark = True if ratio > 1.0 + TIE / 2 else False if ratio < 1.0 - TIE / 2 else None
        points.append(_point(w, ratio, mark, _apart(g.time_ms, p.time_ms)))
    return _finding(claim, "green time / green-pinned time", points)


def monitor_restores(layouts):
    """Settle throughput of green-monitor over green: the parking monitor should cost little."""
    claim = ("A monitor that parks instead of pinning (JEP 491) restores virtual-thread "
             "throughput")
    pairs = _pairs(layouts, "settle", "green-monitor", "green")
    if not pairs:
        return _untested(claim, "settle", ["green", "green-monitor"])
    points = []
    for w, m, g in pairs:
        ratio = _ratio(m.throughput[0], g.throughput[0])
        if ratio <= 0.5:
            points.append(_point(w, ratio, False, _apart(m.throughput, g.throughput)))
        else:
            points.append(Point(w, ratio, True if ratio >= 1.0 - TIE else None))
    return _finding(claim, "green-monitor/green throughput", points)


def _ranges_apart(a, b):
    """Whether two (low, high) ranges of per-iteration values do not overlap. For a
    count that is exact, such as a process's threads, the values that occurred are the
    spread: a t-interval from three iterations multiplies any one-off deviation by 31.6
    and would call a 50x gap noise."""
    return a[0] > b[1] or b[0] > a[1]


def fewer_os_threads(layouts):
    """Peak OS threads of the pool over those of green threads, for the highest single
    rank: the per-rank meaning the console and the seed table's column give."""
    claim = "Virtual threads use far fewer OS threads (settle peak OS threads)"
    pairs = _pairs(layouts, "settle", "threads", "green")
    if not pairs:
        return _untested(claim, "settle", ["threads", "green"])
    points = []
    for w, t, g in pairs:
        ratio = _ratio(t.peak_threads[0], g.peak_threads[0])
        mark = True if ratio >= 5.0 else False if ratio <= 1.0 else None
        # Support needs the counts apart; a pool that used no more threads than green
        # threads contradicts the claim even when their counts overlap, as equal ones do.
        apart = _ranges_apart(t.peak_threads_range, g.peak_threads_range)
        points.append(_point(w, ratio, mark, apart or mark is False))
    counts = ", ".join(f"{t.peak_threads[0]:.0f} against {g.peak_threads[0]:.0f} ({w})"
                       for w, t, g in pairs[:LISTED])
    return _finding(claim, "threads/green peak OS threads", points,
                    f"; highest single rank: {counts}")


def _var_layouts(layouts):
    """(where, sequential summary, {strategy: summary}) for each layout that ran var
    sequential and at least one other var strategy."""
    out = []
    for where, c in layouts:
        seq = c.summaries.get(("var", "sequential"))
        others = {s: x for (j, s), x in c.summaries.items() if j == "var" and s != "sequential"}
        if seq is not None and others:
            out.append((where, seq, dict(sorted(others.items()))))
    return out


def _cautious_speedup(seq, other):
    """The smallest speedup the intervals allow: the bound is beaten only if even this
    exceeds it."""
    if seq.time_ms[1] is None or other.time_ms[1] is None:
        return _ratio(seq.time_ms[0], other.time_ms[0])
    return _ratio(seq.time_ms[0] - seq.time_ms[1], other.time_ms[0] + other.time_ms[1])


def core_bound(layouts):
    """The best var speedup over sequential in a run against the CPUs each rank owns."""
    claim = "No strategy beats the core count on CPU-bound work (var speedup over sequential)"
    found = _var_layouts(layouts)
    if not found:
        return _untested(claim, "var", ["sequential", "pool", "steal"])
    points, parts = [], []
    for where, seq, others in found:
        gains = {s: _ratio(seq.time_ms[0], x.time_ms[0]) for s, x in others.items()}
        best = max(gains, key=gains.get)
        bound = CORE_SLACK * seq.cpus_per_rank
        within = gains[best] <= bound
        beaten = _cautious_speedup(seq, others[best]) > bound
        points.append(_point(where, gains[best], True if within else False, within or beaten))
        parts.append(f"{best} {gains[best]:.2f}x with {seq.cpus_per_rank} "
                     f"CPU{'s' if seq.cpus_per_rank != 1 else ''} per rank ({where})")
    shown = parts if len(parts) <= LISTED else parts[:1] + parts[-1:]
    text = "best speedup over sequential: " + "; ".join(shown) + _noise_note(points)
    return Finding(claim, text, _verdict(points))


def _tie_point(where, seq, others):
    """One layout: every strategy within TIE of sequential supports the tie, every one
    apart from it beyond the intervals contradicts it."""
    ratios = {s: _ratio(x.time_ms[0], seq.time_ms[0]) for s, x in others.items()}
    tied = [abs(r - 1.0) <= TIE for r in ratios.values()]
    apart = [_apart(x.time_ms, seq.time_ms) for x in others.values()]
    noisy = any(not t and not a for t, a in zip(tied, apart))
    if all(tied):
        mark = True
    elif not any(tied) and all(apart):
        mark = False
    else:
        mark = None
    return Point(where, max(ratios.values()), mark, noisy and mark is None), ratios


def cpu_bound_tie(layouts):
    """Each var strategy's time against sequential: a tie is within 10%."""
    claim = "CPU-bound strategies all tied with sequential (var)"
    found = _var_layouts(layouts)
    if not found:
        return _untested(claim, "var", ["sequential", "pool", "steal"])
    points, parts = [], []
    for where, seq, others in found:
        point, ratios = _tie_point(where, seq, others)
        points.append(point)
        parts.append(", ".join(f"{s} {r:.2f}" for s, r in ratios.items())
                     + f" of sequential time ({where}, {seq.cpus_per_rank} "
                     f"CPU{'s' if seq.cpus_per_rank != 1 else ''} per rank)")
    shown = parts if len(parts) <= LISTED else parts[:1] + parts[-1:]
    text = ("; ".join(shown) + "; a tie is expected only where a rank has one CPU"
            + _noise_note(points))
    return Finding(claim, text, _verdict(points))


CLAIMS = (green_vs_pool, pinning_collapses, pinned_faster, monitor_restores,
          fewer_os_threads, core_bound, cpu_bound_tie)


def judge(experiments):
    """Judge every claim over every layout of every experiment."""
    many = len(experiments) > 1
    layouts = [(f"{e.label} {c.label}" if many else c.label, c)
               for e in experiments for c in e.configs]
    return [claim(layouts) for claim in CLAIMS]


def rows(findings):
    """The findings as CSV rows."""
    return [{"claim": f.claim, "evidence": f.evidence, "verdict": f.verdict} for f in findings]
