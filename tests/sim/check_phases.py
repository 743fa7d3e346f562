"""Check /ranks/phase_ns: [phases][ranks] int64 in ns, the phases named in order,
every entry non-negative, rank 0's book and every rank's strategies and write
positive, and each rank's sum within the wall time measured outside (when given).
Usage: check_phases.py FILE RANKS WALL_NS"""
import sys

import h5py

PHASES = ["startup", "checks", "book", "scatter", "prepare", "strategies", "gather", "write"]


def main(path, ranks, wall_ns):
    with h5py.File(path, "r") as f:
        d = f["ranks/phase_ns"]
        names = d.attrs["phases"].split(",")
        assert names == PHASES, names
        assert d.attrs["unit"] == "ns", d.attrs["unit"]
        v = d[...]
    assert v.shape == (len(PHASES), ranks), v.shape
    assert (v >= 0).all(), v
    at = {p: k for k, p in enumerate(PHASES)}
    assert v[at["book"], 0] > 0, "rank 0 built no book"
    for p in ("strategies", "write", "scatter"):
        assert (v[at[p]] > 0).all(), f"{p} has a zero"
    if wall_ns:
        assert (v.sum(axis=0) <= wall_ns).all(), (v.sum(axis=0), wall_ns)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
