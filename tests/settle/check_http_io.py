"""settle under --io http against --io sleep, from the HDF5 files of the same book.

  same SLEEP.h5 HTTP.h5...   every strategy's status and failed_check columns are
                             equal, trade for trade, and some trades failed
  attrs FILE IO WHERE CAP    the root attributes io, clearinghouse, ch_max_inflight,
                             each named in result_options
  figures FILE [CAP]         every strategy has the clearinghouse's figures: as many
                             checks served as the book's trades make (two each, three
                             for a SELL), no errors, and with CAP no more than CAP in
                             flight at once on any rank
  nofigures FILE             no strategy has them
"""
import sys

import h5py
import numpy as np

STRATEGIES = ("threads", "green", "green-pinned", "green-monitor", "callbacks")
FIGURES = ("ch_checks", "ch_connections", "ch_peak_in_flight", "ch_mean_in_flight",
           "ch_p99_latency", "ch_errors")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def same(sleep_path, *http_paths):
    with h5py.File(sleep_path, "r") as s:
        want = {(g, c): s[f"settle/{g}/{c}"][...] for g in STRATEGIES
                for c in ("status", "failed_check")}
    failed = int(np.sum(want[("green", "status")] != 0))
    check(failed > 0, f"{sleep_path}: no trade failed, so the test shows nothing")
    for path in http_paths:
        with h5py.File(path, "r") as h:
            for (g, c), v in want.items():
                got = h[f"settle/{g}/{c}"][...]
                check(np.array_equal(got, v),
                      f"{path}: settle/{g}/{c} differs from sleep mode in "
                      f"{int(np.sum(got != v))} of {len(v)} trades")
    print(f"same: {len(http_paths)} http run(s) as sleep mode, trade for trade, in every "
          f"strategy ({failed} of {len(want[('green', 'status')])} trades failed)")


def attrs(path, io, where, cap):
    with h5py.File(path, "r") as f:
        keys = f.attrs["result_options"].split(",")
        got = (f.attrs.get("io"), f.attrs.get("clearinghouse"),
               f.attrs.get("ch_max_inflight"))
        check(got == (io, where, int(cap)), f"{path}: io, clearinghouse, ch_max_inflight "
              f"{got}, not {(io, where, int(cap))}")
        for k in ("io", "clearinghouse", "ch_max_inflight"):
            check(k in keys, f"{path}: {k} not in result_options")
    print(f"attrs: {path} says io={io}, clearinghouse={where}, ch_max_inflight={cap}")


def figures(path, cap=None):
    with h5py.File(path, "r") as f:
        side = f["trades/side"][...]
        checks = 2 * len(side) + int(np.sum(side == 1))
        for g in STRATEGIES:
            grp = f[f"settle/{g}"]
            for name in FIGURES:
                check(name in grp, f"{path}: settle/{g} has no {name}")
            if any(name not in grp for name in FIGURES):
                continue
            served = grp["ch_checks"][...].sum(axis=1)
            check(np.all(served == checks),
                  f"{path}: settle/{g} served {served} checks, the book makes {checks}")
            check(np.all(grp["ch_errors"][...] == 0), f"{path}: settle/{g} had errors")
            check(np.all(grp["ch_connections"][...] >= 1),
                  f"{path}: settle/{g} opened no connection")
            peak = grp["ch_peak_in_flight"][...]
            check(cap is None or np.all(peak <= float(cap)),
                  f"{path}: settle/{g} had {peak.max()} in flight, past the cap {cap}")
            check(np.all(grp["ch_p99_latency"][...] > 0), f"{path}: settle/{g}: no p99")
    print(f"figures: every strategy of {path} has the clearinghouse's, {checks} checks "
          f"served" + (f", at most {cap} in flight" if cap else ""))


def nofigures(path):
    with h5py.File(path, "r") as f:
        for g in STRATEGIES:
            check("ch_checks" not in f[f"settle/{g}"], f"{path}: settle/{g} has figures")
    print(f"nofigures: {path} records no clearinghouse figures")


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    {"same": same, "attrs": attrs, "figures": figures, "nofigures": nofigures}[what](*args)
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    sys.exit(1 if failures else 0)
