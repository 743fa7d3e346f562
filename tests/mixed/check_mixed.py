"""Check a mixed run's HDF5 file: every layout's statuses and VaRs bit for bit settle's
and var's own, its alone phases agreeing (differ 0), its figures present, and shared's
VaR holding its carrier longer than shared-yield's; or, for the figure case, the K
sweep's figure and table."""
import sys

import h5py
import numpy as np

LAYOUTS = ("split", "shared", "shared-yield", "oversubscribed")
FIGURES = ("settle_p50_ms", "settle_p99_ms", "settle_max_ms", "alone_p99_ms", "p99_x",
           "settle_over_cp", "var_per_s", "alone_var_per_s", "var_x", "both_ms",
           "over_max", "over_sum", "hold_max_ms", "hold_p50_us", "hold_total_ms",
           "late_p99_ms", "differ")


def check_results(f, alone, ranks):
    """Statuses equal settle green's, VaRs equal var pool's to the bit, in every layout."""
    status = alone["settle/green/status"][...]
    failed = alone["settle/green/failed_check"][...]
    var = alone["var/pool/var"][...]
    assert len(status) == 200 and len(var) == 200
    for s in LAYOUTS:
        g = f["mixed"][s]
        assert np.array_equal(g["status"][...], status), s
        assert np.array_equal(g["failed_check"][...], failed), s
        assert g["var"][...].tobytes() == var.tobytes(), (s, "VaR differs")
        assert np.all(g["latency_ns"][...] > 0), s
        for name in FIGURES:
            v = g[name][...]
            assert v.shape == (2, ranks) and np.all(np.isfinite(v)), (s, name, v.shape)
        assert np.all(g["differ"][...] == 0), s
        assert np.all(g["var_per_s"][...] > 0) and np.all(g["settle_p99_ms"][...] > 0)


def check_holds(f):
    """Only the shared layouts run VaR on the carriers, and shared's VaR holds its
    carrier for a whole trade where shared-yield's holds it for --yield-every
    simulations: its median stretch is longer, in every iteration on every rank."""
    for s in ("split", "oversubscribed"):
        assert np.all(f["mixed"][s]["hold_total_ms"][...] == 0), s
    shared = f["mixed/shared/hold_p50_us"][...]
    yielding = f["mixed/shared-yield/hold_p50_us"][...]
    assert np.all(yielding > 0), yielding
    assert np.all(shared > 2 * yielding), (shared, yielding)


def check_figure(out, files):
    """The sweep's PNG and one table row per K with its figures."""
    with open(out + ".png", "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"
    rows = [line.split(",") for line in open(out + ".csv").read().split("\n")[1:]
            if line]
    ks = sorted(int(r[0]) for r in rows)
    want = sorted(int(h5py.File(p)["/"].attrs["yield_every"]) for p in files)
    assert ks == want, (ks, want)


def main():
    case = sys.argv[1]
    if case == "figure":
        check_figure(sys.argv[2], sys.argv[3:])
        return
    ranks = 2 if case == "ranks" else 1
    with h5py.File(sys.argv[2]) as f, h5py.File(sys.argv[3]) as alone:
        check_results(f, alone, ranks)
        check_holds(f)
    print("mixed", case, "ok")


main()
