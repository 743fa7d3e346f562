"""A study page's setup table and method, from the kept sitting alone (so a change of
wording here reaches every page through --from, with no sitting re-run)."""
from . import verdicts

SEED_LATENCY = "fetch and update, then 60-160, 40-120 and (sells) 50-140 ms sleeps"


def _scaled(text, scale):
    """The seed's latencies as run: the seed's own text at scale 1."""
    return text if scale == 1 else f"{text}, x {scale:g}"


def _limit(arm):
    """A pool arm's memory limit as granted: the group's, or none where none was made."""
    granted = [v for m in arm["strategies"].values() for v in m.get("mem_limit_mib", [])]
    if not granted or max(granted) <= 0:
        return f"asked {arm['attrs']['mem_limit'] >> 20} MiB; no memory group here: none"
    return f"{max(granted):.0f} MiB memory cgroup"


# The pool job's phases under --study-phases (LD_POOL_STUDY_S, jobs/pool/pool.h): its
# warmup_s and measure_s attributes keep the options' values, which the flag overrides.
STUDY_PHASE_S = 30


def _phases(attrs):
    """A pool arm's warm-up and measured phases as they ran."""
    if attrs.get("study_phases"):
        return f"{STUDY_PHASE_S} s warm-up + {STUDY_PHASE_S} s measured"
    return f"{attrs['warmup_s']:g} s warm-up + {attrs['measure_s']:g} s measured"


def _tight_did(arms):
    """What the tight bound did to each strategy, beside the loose arm's peak: the runs
    it killed, or that it let serve."""
    loose, tight = arms["loose"]["strategies"], arms["tight"]["strategies"]
    parts = []
    for name, m in tight.items():
        killed = sum(1 for k in m.get("killed", []) if k)
        peaks = [p for p in loose.get(name, {}).get("cgroup_peak_mib", []) if p]
        need = f", loose peak {max(peaks):.0f} MiB" if peaks else ""
        parts.append(f"{name} killed in {killed} of {len(m.get('killed', []))} runs{need}")
    return ("; ".join(parts) + ". A bound below what the server needs ends it (OOM "
            "killer); nothing here slows before it as a collected heap does")


def _binds(peak, limit):
    """Whether the low profile's memory limit bound, in words."""
    if limit <= 0:
        return "no memory group could be made here: no limit at all"
    if peak < limit:
        return (f"no: the low profile's group peaked at {peak:.1f} MiB of {limit:.0f} MiB; "
                "a limit that binds here ends the rank (OOM killer), it cannot slow it "
                "as a heap does")
    return f"yes: peak {peak:.1f} MiB at the {limit:.0f} MiB limit"


def setup(study, sitting):
    """This sitting's side of the setup table, keyed as the registry's 'here' fields."""
    arms, machine = sitting["arms"], sitting["machine"]
    cpus, cpu, load = machine["cpus"], machine["cpu_model"], machine["load_generator"]
    first = next(iter(arms.values()))["attrs"]
    s = {"cpus": str(cpus), "cpu_model": cpu, "runtime": "loomdist (C, green threads), "
         "one rank", "iterations": "", "memory": "", "load": load}
    if study == "settlement":
        settle, pinned, var = arms["settle"]["attrs"], arms["pinned-all"]["attrs"], \
            arms["var"]["attrs"]
        s.update(trades=f"{settle['trades']:,}", os_threads=f"{settle['os_threads']} threads",
                 latency=_scaled(SEED_LATENCY, settle["latency_scale"])
                 + f" (pinned-all arm: x {pinned['latency_scale']:g})",
                 pin_fraction=f"{settle['pin_fraction']:g} (settle arm) and "
                              f"{pinned['pin_fraction']:g} (pinned-all arm)",
                 sims=f"{var['sims']:,}", var_trades=f"{var['trades']:,}",
                 iterations=f"{settle['iterations']} (settle, var), {pinned['iterations']} "
                            "(pinned-all)",
                 memory="none (peak RSS measured)")
    elif study == "pooling":
        s.update(connections=f"{first['connections']:,}", think_ms=f"{first['think_ms']:g} ms",
                 phases=_phases(first),
                 loose_limit=_limit(arms["loose"]), tight_limit=_limit(arms["tight"]),
                 tight_did=_tight_did(arms),
                 memory="the server's memory cgroup: stacks, heap and socket buffers; past "
                        "it the OOM killer ends the server",
                 arms="fresh, pooled (reuses its chunk: the fix's behaviour), pooled-trim; "
                      "no arm re-allocates a pooled thread's chunk as the stock JVM does",
                 runtime="loomdist-pool-server (C, libuv, green threads)",
                 load=first.get("load", load), iterations=str(first["iterations"]))
    elif study == "models":
        low = [a for n, a in arms.items() if n.endswith("-low")]
        peak = max((max(a["strategies"][m].get("cgroup_peak_mib") or [0])
                    for a in low for m in a["strategies"]), default=0)
        limit = max((max(a["strategies"][m].get("mem_limit_mib") or [0])
                     for a in low for m in a["strategies"]), default=0)
        granted = {n: max(max(m.get("cpus") or [0]) for m in a["strategies"].values())
                   for n, a in arms.items()}
        s.update(cpus=", ".join(f"{n}: {c:g}" for n, c in granted.items()),
                 memory="a memory cgroup per rank: 512 MiB (low), 4 GiB (high), clamped to "
                        "the machine",
                 binds=_binds(peak, limit),
                 delay_ms=f"{first['delay_ms']:g} ms",
                 tasks=f"{arms['light-low']['attrs']['tasks']:,} and "
                       f"{arms['heavy-low']['attrs']['tasks']:,}",
                 thread_cap=f"{first['thread_cap']:,}",
                 forks=f"{first['forks']} x {first['warmup_iterations']} x "
                       f"{first['measurement_iterations']}",
                 iteration="one operation (start every task, wait for all): loomdist-forks "
                           "counts operations, it cannot time a span")
    else:
        s.update(trades=f"{first['trades']:,}", sims=f"{first['sims']:,}",
                 latency=_scaled("seed 000's", first["latency_scale"]),
                 iterations=str(first["iterations"]))
    return s


def method(study, sitting):
    """The page's method paragraph, from what the sitting did."""
    mode, note = sitting["mode"], sitting["note"]
    load_start, load_end = sitting["machine"]["load_start"], sitting["machine"]["load_end"]
    common = [f"- One sitting (--{mode}): every arm below ran back to back, one rank, "
              "without mpirun, each as the command shown.",
              f"- Load average {load_start:g} at the start and {load_end:g} at the end"
              + (f"; {note}" if note else "") + ". Timings taken on a shared machine are "
              "noisy; the intervals say how much.",
              "- Each arm runs its strategies one after another, all iterations of one "
              "before the next: a change of the machine's load between strategies biases "
              "their ratios beyond what the intervals show (a speedup above the CPU count "
              "is the sign of it); alternated runs would remove that, and are not made "
              "yet.",
              f"- Intervals are two-sided Student-t at {verdicts.CONFIDENCE:.0%} over the "
              "measured iterations; ratios take theirs on the log scale (delta method, "
              "Welch), exact counts their range."]
    quick = {
        "settlement": "- --quick shrinks the latencies (settle x0.1, pinned-all x0.01) and "
                      "VaR to 2,000 trades; ratios of makespans keep their meaning because "
                      "every strategy's latencies shrink alike.",
        "pooling": "- --quick runs 3 s + 5 s phases instead of the study's 30 s + 30 s.",
        "models": "- --quick runs 2 forks x 1 warm-up x 3 measured operations instead of "
                  "5 x 3 x 5, and leaves stackless-blocking out at 50,000 tasks (8 s per "
                  "operation; no claim reads it).",
        "split": "- --quick runs 4,000 trades and 3 iterations instead of 8,000 and 5."}
    full_text = {
        "settlement": "- --full keeps the seed's latencies for settle; pinned-all runs at "
                      "x0.1, since 8,000 trades each pinning a carrier for ~0.24 s take "
                      "16 min an iteration at full latency on 2 CPUs.",
        "pooling": "- --full runs the study's phases (--study-phases), and repeats the loose "
                   "arm (up to 2 more rounds) while P1's interval cannot resolve +13.5%.",
        "models": "- --full runs JMH's 5 forks x 3 warm-ups x 5 measured operations "
                  "(loomdist-forks --study).",
        "split": "- --full runs 8,000 trades x 20,000 sims, 5 iterations."}
    what = {
        "settlement": "- Arms: `settle` (every strategy at --pin-fraction 0.01, as loomdist "
                      "defaults), `pinned-all` (green against green-pinned at --pin-fraction "
                      "1: every trade synchronized, as the seed ran), `var` (every VaR "
                      "strategy).",
        "pooling": "- Arms: the three strategies under a loose (448 MiB) and a tight "
                   "(100 MiB) memory cgroup, in the same sitting. The stock JVM's third "
                   "behaviour, a pooled thread whose chunk is re-allocated after promotion, "
                   "has no stand-in: nothing here promotes or re-allocates a chunk, so P13 "
                   "is not applicable. An iteration that served nothing and was not killed "
                   "measured a load generator that never connected (a crowded machine), "
                   "not the server: its figures are no sample (only the group's "
                   "counters and peak are kept), and `unserved` counts it.",
        "models": "- Arms: each of 1,000 and 50,000 tasks under each profile, through "
                  "loomdist-forks (fresh processes, JMH's scoring). A JMH iteration is a "
                  "timed span of operations; a loomdist iteration is one operation.",
        "split": "- Arm: `--jobs mixed`, every layout; each iteration runs settle alone, VaR "
                 "alone, then both, so each `_x` ratio is paired within an iteration."}
    smoke = ("- --smoke shrinks every arm to seconds (the generator's end-to-end test): "
             "its figures test the page, not the claims.")
    return [what[study]] + common + [{"full": full_text, "quick": quick}[mode][study]
                                     if mode != "smoke" else smoke]
