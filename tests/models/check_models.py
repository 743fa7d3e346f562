"""Check a models run's HDF5 file and table: every strategy within its limit, the
profile granted as asked or said to be clamped, and the capped pool's rounds."""
import math
import sys

import h5py
import numpy as np

STRATEGIES = ("threads", "green", "stackless", "hybrid", "stackless-blocking")
POOLS = {"threads": None, "stackless-blocking": 64}  # None: --thread-cap
PROFILE_FIGURES = ("cpus", "cpus_asked", "mem_limit_mib", "mem_asked_mib", "clamped",
                   "cgroup_peak_mib")
CLAMPED_CPUS, CLAMPED_MEMORY = 1, 2


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def limit_ns(f, strategy):
    """A strategy's limit as the job states it: the delay, times the rounds a pool
    needs."""
    tasks, delay_ns = int(f.attrs["tasks"]), int(round(f.attrs["delay_ms"] * 1e6))
    if strategy not in POOLS:
        return delay_ns
    cap = POOLS[strategy] or int(f.attrs["thread_cap"])
    return delay_ns * math.ceil(tasks / min(cap, tasks))


def check_strategy(f, strategy, ranks):
    """Within the limit it claims, which is the one the job states, with every
    profile figure present and consistent."""
    g = f["models"][strategy]
    assert g.attrs["limit_ns"] == limit_ns(f, strategy), (strategy, g.attrs["limit_ns"])
    wall = g["wall_ns"][...]
    assert wall.shape == (3, ranks), (strategy, wall.shape)
    assert np.all(wall >= g.attrs["limit_ns"]), (strategy, wall, "beat its limit")
    fig = {name: g[name][...] for name in PROFILE_FIGURES}
    for name, v in fig.items():
        assert v.shape == (3, ranks) and np.all(np.isfinite(v)), (strategy, name)
    clamped = fig["clamped"].astype(int)
    assert np.all(((clamped & CLAMPED_CPUS) != 0) == (fig["cpus"] < fig["cpus_asked"]))
    assert np.all(((clamped & CLAMPED_MEMORY) != 0) ==
                  (fig["mem_limit_mib"] < fig["mem_asked_mib"]))
    # where a group held the run, the run's own memory was charged to it
    assert np.all((fig["mem_limit_mib"] == 0) | (fig["cgroup_peak_mib"] > 0)), strategy
    if strategy in POOLS:
        assert np.all(g["peak_threads"][...] >= min(
            POOLS[strategy] or int(f.attrs["thread_cap"]), int(f.attrs["tasks"])))
    return fig


def memory_as_probed(fig, memory, what):
    """512 MiB granted where a memory group can be made here (memory "granted", from
    tests/memory_cgroup.py); else no limit, said to be clamped."""
    clamped = (fig["clamped"].astype(int) & CLAMPED_MEMORY) != 0
    if memory == "granted":
        assert np.all(fig["mem_limit_mib"] == 512) and not np.any(clamped), (what, fig)
    else:
        assert np.all(fig["mem_limit_mib"] == 0) and np.all(clamped), (what, fig)


def check_low(f, table, memory):
    """Every model ran under 1 CPU and 512 MiB on each rank, or, on a machine with no
    memory cgroup to make, says it could not have the memory."""
    for s in STRATEGIES:
        fig = check_strategy(f, s, 2)
        assert np.all(fig["cpus"] == 1) and np.all(fig["cpus_asked"] == 1), s
        assert np.all(fig["mem_asked_mib"] == 512), s
        memory_as_probed(fig, memory, s)
        assert f"\n{s} " in table, s
    assert text(f.attrs["profile"]) == "low"


def check_clamped(f, table):
    """1024 CPUs and a PiB were asked: fewer and less were granted, and said so in the
    file and in the table's figures."""
    for s in ("green", "threads"):
        fig = check_strategy(f, s, 1)
        assert np.all(fig["cpus_asked"] == 1024) and np.all(fig["cpus"] < 1024), s
        assert np.all(fig["clamped"] == CLAMPED_CPUS | CLAMPED_MEMORY), s
        assert any(line.split()[:3] == [s, "clamped", "3"]
                   for line in table.splitlines()), s


def check_capped(f, table):
    """100 threads for 400 tasks: each operation takes at least 4 delays; green's
    takes fewer, since nothing caps it."""
    check_strategy(f, "threads", 1)
    check_strategy(f, "green", 1)
    rounds_ns = 4 * limit_ns(f, "green")
    assert f["models/threads"].attrs["limit_ns"] == rounds_ns
    assert np.all(f["models/threads/wall_ns"][...] >= rounds_ns)
    assert np.all(f["models/green/wall_ns"][...] < rounds_ns), f["models/green/wall_ns"][...]
    assert "Limit ops/s" in table


def check_nocgroup(f, table):
    """No group could be made: the run had no memory limit, and says it asked for
    512 MiB and got less."""
    fig = check_strategy(f, "green", 1)
    assert np.all(fig["mem_limit_mib"] == 0) and np.all(fig["cgroup_peak_mib"] == 0)
    assert np.all(fig["clamped"] == CLAMPED_MEMORY) and np.all(fig["cpus"] == 1)


def check_v2(f, table, memory):
    """Only v2 was tried: granted as asked where this machine delegates memory on v2
    (memory_cgroup.py v2), else no limit, said so."""
    fig = check_strategy(f, "green", 1)
    memory_as_probed(fig, memory, "green")
    assert np.all(fig["clamped"] == (0 if memory == "granted" else CLAMPED_MEMORY)), fig


def check_killed(f, table):
    """8 MiB per rank: 1000 pool threads outgrow it and every run of threads ends in
    the OOM killer, said as killed (where the machine granted the limit), while
    stackless runs within it; the ranks live on to write the file. The test runs only
    where memory_cgroup.py found a group can be made, so the limit must be granted."""
    g = f["models"]["threads"]
    limited = g["mem_limit_mib"][...] == 8
    assert np.all(limited), g["mem_limit_mib"][...]
    assert np.all(g["killed"][...] == limited.astype(float)), g["killed"][...]
    assert np.all(g["cgroup_peak_mib"][...][limited] >= 7), g["cgroup_peak_mib"][...]
    fig = check_strategy(f, "stackless", 2)
    assert np.all(f["models/stackless/killed"][...] == 0)
    assert np.all(fig["cgroup_peak_mib"] < 8), fig["cgroup_peak_mib"]
    header = next(line for line in table.splitlines() if line.startswith("Strategy"))
    assert header.split()[-1] == "killed", header
    main_table = table.split(header)[1].split("\n\n")[0]
    rows = {line.split()[0]: line.split()[-1] for line in main_table.splitlines()
            if line.strip()}
    assert rows["stackless"] == "0" and rows["threads"] in ("0", "1"), rows


def main(case, path, table_path, memory="granted"):
    with open(table_path) as t:
        table = t.read()
    with h5py.File(path, "r") as f:
        assert "models" in text(f.attrs["jobs"])
        checks = {"low": check_low, "clamped": check_clamped, "capped": check_capped,
                  "nocgroup": check_nocgroup, "v2": check_v2, "killed": check_killed}
        if case in ("low", "v2"):
            checks[case](f, table, memory)
        else:
            checks[case](f, table)
    print(f"models {case} ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
