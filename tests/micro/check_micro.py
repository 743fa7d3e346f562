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


def main(path):
    with h5py.File(path, "r") as f:
        jobs = f.attrs["jobs"]
        assert "micro" in (jobs.decode() if isinstance(jobs, bytes) else jobs)
        for strategy, figures in EXPECT.items():
            g = f["micro"][strategy]
            assert "wall_ns" in g, strategy
            for name, unit in figures.items():
                d = g[name]
                assert d.shape == (2, 2) and d.dtype == np.float64, (name, d.shape)
                u = d.attrs["unit"]
                assert (u.decode() if isinstance(u, bytes) else u) == unit, name
                assert np.all(np.isfinite(d[...])) and np.all(d[...] > 0), name
            # a park at 10^6 sleepers is above --micro-max 2000: left out
            assert "wheel_1m_ns" not in g
        assert np.all(f["micro/switch/speedup"][...] > 1)
        assert np.all(f["micro/spawn/speedup"][...] > 1)
        assert np.all(f["micro/memory/threads"][...] == 2000)
        for mode in ("own", "copy"):
            assert np.all(f[f"micro/memory/{mode}_kib_per_thread"][...] < 64), mode
    print("micro figures ok")


if __name__ == "__main__":
    main(sys.argv[1])
