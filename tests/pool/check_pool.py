"""Check a pool run's HDF5 file: every strategy served without errors and counted
what its load generator counted; capacity frozen at warm-up kept by pooled alone; a
memory limit reported as granted, with the group's counters."""
import sys

import h5py
import numpy as np

STRATEGIES = ("fresh", "pooled", "pooled-trim")

# A group's recorded peak may pass its limit by a little: the kernel forces some
# charges through while it reclaims or kills (one killed run here peaked at 2 MiB and
# 4 KiB). A quarter of a MiB is far below what an unlimited run uses.
PEAK_OVER_MIB = 0.25
CLAMPED_MEMORY = 2  # the clamped figure's bit for memory granted short of asked
LIMIT_MIB = 1024  # test_pool.sh's --mem-limit for the cases limited and shared


def figures(f, strategy):
    g = f["pool"][strategy]
    return {name: float(np.mean(g[name][...])) for name in g
            if g[name].dtype.kind == "f" and g[name].ndim == 2}


def check_served(fig, s, tool):
    """Requests flowed, none failed, and the server counted each one the generator
    did: exactly for loomdist-load, which drains, and at least as many for wrk,
    which leaves its last requests unread."""
    assert fig["killed"] == 0, (s, "killed")  # first: its errors say less
    assert fig["requests"] > 0 and fig["rps"] > 0, (s, fig["requests"])
    assert fig["errors"] == 0, (s, fig["errors"])
    assert fig["load_wrk"] == (tool == "wrk"), (s, fig["load_wrk"])
    if tool == "builtin":
        assert fig["server_requests"] == fig["requests"], (
            s, fig["server_requests"], fig["requests"])
    else:
        assert fig["server_requests"] >= fig["requests"], (s, fig)
    # a closed loop cannot beat its connections over the think time
    assert fig["rps"] <= fig["rps_limit"] * 1.05, (s, fig["rps"], fig["rps_limit"])


def check_capacity(figs):
    """The warm-up's deep frames: pooled threads keep the capacity they froze them
    in; fresh threads (in copy mode) and trimmed ones follow what they use."""
    for s, fig in figs.items():
        cap, used = fig["capacity_mean"], fig["frozen_mean"]
        assert used > 0 and cap >= used, (s, cap, used)
        assert fig["warmup_frozen_mean"] > 2 * used, (s, fig["warmup_frozen_mean"], used)
        assert (fig["chunk_trims"] > 0) == (s == "pooled-trim"), (s, fig["chunk_trims"])
    pooled = figs["pooled"]["capacity_mean"]
    assert pooled > 2 * figs["pooled"]["frozen_mean"], ("warm-up capacity not kept", pooled)
    assert pooled >= 0.8 * figs["pooled"]["warmup_capacity_mean"], pooled
    assert figs["pooled-trim"]["capacity_mean"] < 0.5 * pooled, figs["pooled-trim"]
    if "fresh" in figs:
        fresh = figs["fresh"]
        assert fresh["capacity_mean"] < 1.5 * fresh["frozen_mean"], fresh


def check_killed(fig):
    """Killed by the kernel for want of memory, and said so with the group's own
    counters (the test runs only where a memory group can be made)."""
    assert int(fig["clamped"]) & CLAMPED_MEMORY == 0, fig["clamped"]
    assert fig["mem_limit_mib"] == 2, fig["mem_limit_mib"]
    assert fig["killed"] == 1 and fig["oom_kills"] >= 1, fig
    assert fig["limit_hits"] > 0 and 0 < fig["cgroup_peak_mib"] <= 2 + PEAK_OVER_MIB, fig
    assert fig["rps"] == 0, fig["rps"]


def check_report(path, report):
    """The analysis' table holds a row per strategy, with the file's own rate."""
    with open(report) as r:
        rows = [line.split("|") for line in r if line.startswith("| pool.h5 |")]
    with h5py.File(path, "r") as f:
        for s in STRATEGIES:
            mine = [row for row in rows if row[2].strip() == s]
            assert len(mine) == 1, (s, rows)
            rps = float(np.mean(f["pool"][s]["rps"][...]))
            assert mine[0][3].strip() == f"{rps:,.0f}", (s, mine[0][3], rps)
    print("pool report: ok")


def check_shared(path, memory):
    """--mem-limit given once for two jobs: one root attribute, named once in the
    file's result_options and in each job's, and each job's run granted it where a
    memory group can be made (memory is "granted"), else not limited and said to be
    clamped."""
    with h5py.File(path, "r") as f:
        assert int(f.attrs["mem_limit"]) == LIMIT_MIB << 20, f.attrs["mem_limit"]
        names = text(f.attrs["result_options"]).split(",")
        assert names.count("mem_limit") == 1, names
        for job, s in (("models", "green"), ("pool", "fresh")):
            mine = text(f[job].attrs["result_options"]).split(",")
            assert mine.count("mem_limit") == 1, (job, mine)
            asked = float(np.mean(f[job][s]["mem_asked_mib"][...]))
            granted = float(np.mean(f[job][s]["mem_limit_mib"][...]))
            clamped = float(np.mean(f[job][s]["clamped"][...]))
            want = (LIMIT_MIB, 0) if memory == "granted" else (0, CLAMPED_MEMORY)
            assert asked == LIMIT_MIB and (granted, int(clamped) & CLAMPED_MEMORY) == want, (
                job, granted, clamped)
    print("pool shared: ok")


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main(case, path, extra=None):
    """extra: the report's path for the case report; else whether a memory group can
    be made here ("granted" or "refused", from tests/memory_cgroup.py)."""
    if case == "report":
        check_report(path, extra)
        return
    if case == "shared":
        check_shared(path, extra)
        return
    with h5py.File(path, "r") as f:
        present = [s for s in STRATEGIES if s in f["pool"]]
        tool = "wrk" if case == "wrk" else "builtin"
        figs = {s: figures(f, s) for s in present}
        if case == "killed":
            check_killed(figs["pooled"])
            print("pool killed: ok")
            return
        for s, fig in figs.items():
            check_served(fig, s, tool)
            if case == "limited":
                # the test runs only where a memory group can be made: granted
                assert fig["mem_limit_mib"] == LIMIT_MIB, fig
                assert int(fig["clamped"]) & CLAMPED_MEMORY == 0, fig
                assert 0 < fig["cgroup_peak_mib"] <= LIMIT_MIB + PEAK_OVER_MIB, fig
                for k in ("limit_hits", "oom", "oom_kills"):
                    assert fig[k] >= 0, k
        if case == "copy":
            check_capacity(figs)
        elif case == "own":
            check_capacity({s: figs[s] for s in ("pooled", "pooled-trim")})
            # a fresh thread takes a recycled stack, touched pages and all
            fresh = figs["fresh"]
            assert fresh["capacity_mean"] > 2 * fresh["frozen_mean"], fresh
        expect = {"copy": STRATEGIES, "own": STRATEGIES, "limited": ("pooled",),
                  "wrk": ("fresh",)}[case]
        assert tuple(present) == expect, present
    print(f"pool {case}: ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
