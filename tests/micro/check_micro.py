"""Check a micro run's HDF5 file: figures as [iterations, ranks] float64 datasets."""
import sys

import h5py
import numpy as np

EXPECT = {
    "switch": {"green_ns": "ns", "ucontext_ns": "ns", "speedup": "x", "copy_ns": "ns"},
    "spawn": {"green_ns": "ns", "pthread_ns": "ns", "speedup": "x"},
    "park": {"wheel_1_ns": "ns", "heap_1_ns": "ns", "wheel_1k_ns": "ns",
             "heap_1k_ns": "ns"},
    "memory": {"threads": "threads", "own_kib_per_thread": "KiB",
               "copy_kib_per_thread": "KiB"},
}
# task's figures are margins between two runs, which noise may tip below zero on a
# busy machine: they are checked as there and finite, not held to a time. Its counter
# figures are there exactly where counters_exposed is 1.
TASK = {"green_ns": "ns", "green_cpu_ns": "ns", "os_ns": "ns", "os_cpu_ns": "ns",
        "speedup": "x", "counters_exposed": "bool"}
COUNTERS = {"green_instructions": "instructions", "green_cycles": "cycles",
            "os_user_instructions": "instructions", "os_user_cycles": "cycles"}


def figure(g, name, unit):
    """A figure's [iterations, ranks] float64 values, its unit checked."""
    d = g[name]
    assert d.shape == (2, 2) and d.dtype == np.float64, (name, d.shape)
    u = d.attrs["unit"]
    assert (u.decode() if isinstance(u, bytes) else u) == unit, name
    assert np.all(np.isfinite(d[...])), name
    return d[...]


def main(path):
    with h5py.File(path, "r") as f:
        jobs = f.attrs["jobs"]
        assert "micro" in (jobs.decode() if isinstance(jobs, bytes) else jobs)
        for strategy, figures in EXPECT.items():
            g = f["micro"][strategy]
            assert "wall_ns" in g, strategy
            for name, unit in figures.items():
                assert np.all(figure(g, name, unit) > 0), name
            # a park at 10^6 sleepers is above --micro-max 2000: left out
            assert "wheel_1m_ns" not in g
        task = f["micro/task"]
        assert "wall_ns" in task
        values = {name: figure(task, name, unit) for name, unit in TASK.items()}
        exposed = values["counters_exposed"]
        assert np.all((exposed == 0) | (exposed == 1)), exposed
        for name, unit in COUNTERS.items():
            assert (name in task) == bool(exposed.all()), name
            if name in task:
                figure(task, name, unit)
        assert np.all(f["micro/switch/speedup"][...] > 1)
        assert np.all(f["micro/spawn/speedup"][...] > 1)
        assert np.all(f["micro/memory/threads"][...] == 2000)
        for mode in ("own", "copy"):
            assert np.all(f[f"micro/memory/{mode}_kib_per_thread"][...] < 64), mode
    print("micro figures ok")


if __name__ == "__main__":
    main(sys.argv[1])
