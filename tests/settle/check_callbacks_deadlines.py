"""callbacks against green, from one settle run of both: FILE.

Each bound is set against what a timer that rounds each call up to a whole millisecond
did, and far from what a loaded machine does to a correct run:

- makespan over critical path, the median over iterations of the slowest rank's wall
  time: callbacks' is at most 1.35, and at most green's plus 0.2 (rounding made it
  about 1.5; a stall on a shared machine moved it by up to 0.1);
- per trade, in the same row order: callbacks' latencies follow green's, a correlation
  of at least 0.8 (the same plan waited the same deadlines; a stall shifts every trade
  of a run by the same few milliseconds, which a difference of medians would read as
  a fault, and a correlation does not);
- the latencies' parts below a millisecond spread over the whole millisecond: each
  tenth of it holds at least 2% of the trades (rounding left half the tenths empty;
  noise only spreads them further).
"""
import sys

import h5py
import numpy as np


def ratio(f, strategy, bound):
    """Median over iterations of the makespan over the critical path."""
    wall = f[f"settle/{strategy}/wall_ns"][...].max(axis=1)
    return float(np.median(wall)) / bound


def main(path):
    with h5py.File(path, "r") as f:
        bound = float(f["settle/callbacks"].attrs["critical_path_ns"])
        green, callbacks = ratio(f, "green", bound), ratio(f, "callbacks", bound)
        lat_green = f["settle/green/latency_ns"][...].astype(np.float64)
        lat_cb = f["settle/callbacks/latency_ns"][...].astype(np.int64)
    follow = float(np.corrcoef(lat_green, lat_cb.astype(np.float64))[0, 1])
    tenths = np.bincount((lat_cb % 1_000_000) // 100_000, minlength=10) / len(lat_cb)
    print(f"makespan / critical path: green {green:.3f}, callbacks {callbacks:.3f}; "
          f"per trade correlation callbacks ~ green {follow:.3f}; "
          f"sub-ms tenths {np.round(tenths * 100).astype(int).tolist()} %")
    failures = []
    if callbacks > 1.35 or callbacks > green + 0.2:
        failures.append(f"callbacks takes {callbacks:.3f}x the critical path, green {green:.3f}x")
    if follow < 0.8:
        failures.append(f"callbacks' trades do not follow green's (correlation {follow:.3f})")
    if tenths.min() < 0.02:
        failures.append("callbacks' latencies cluster on whole milliseconds")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    return not failures


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1]) else 1)
