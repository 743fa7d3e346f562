"""callbacks against green, from one settle run of both: FILE.

- makespan over critical path, the median over iterations of the slowest rank's wall
  time: callbacks' is at most 1.15, and at most green's plus 0.08 (a timer that rounds
  each call up to a whole millisecond made it about 1.5);
- per trade, in the same row order: callbacks' latency is within 0.5 ms of green's for
  the median trade (the same plan waited the same deadlines; rounding made it 3 ms);
- the latencies' parts below a millisecond spread over the whole millisecond: each
  tenth of it holds at least 2% of the trades (rounding left half the tenths empty).
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
        lat_green = f["settle/green/latency_ns"][...].astype(np.int64)
        lat_cb = f["settle/callbacks/latency_ns"][...].astype(np.int64)
    apart_ms = float(np.median(np.abs(lat_cb - lat_green))) / 1e6
    tenths = np.bincount((lat_cb % 1_000_000) // 100_000, minlength=10) / len(lat_cb)
    print(f"makespan / critical path: green {green:.3f}, callbacks {callbacks:.3f}; "
          f"per trade callbacks - green: median |d| {apart_ms:.3f} ms; "
          f"sub-ms tenths {np.round(tenths * 100).astype(int).tolist()} %")
    failures = []
    if callbacks > 1.15 or callbacks > green + 0.08:
        failures.append(f"callbacks takes {callbacks:.3f}x the critical path, green {green:.3f}x")
    if apart_ms > 0.5:
        failures.append(f"callbacks' trades take {apart_ms:.3f} ms more or less than green's")
    if tenths.min() < 0.02:
        failures.append("callbacks' latencies cluster on whole milliseconds")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    return not failures


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv[1]) else 1)
