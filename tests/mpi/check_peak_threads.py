"""Check that every rank's peak_threads reaches a floor, in every iteration.

Usage: check_peak_threads.py FILE.h5 JOB/STRATEGY FLOOR [JOB/STRATEGY FLOOR ...]
(exit 1 with one line per strategy below its floor)
"""
import sys

import h5py


def main(path, pairs):
    ok = True
    with h5py.File(path, "r") as f:
        for group, floor in pairs:
            peak = f[f"{group}/peak_threads"][...]
            print(f"{path} {group}: peak OS threads per rank {peak.tolist()}, "
                  f"floor {floor}")
            if peak.min() < floor:
                print(f"FAIL: {path} {group}: a rank reports {peak.min()} threads, "
                      f"below {floor}", file=sys.stderr)
                ok = False
    return ok


if __name__ == "__main__":
    args = sys.argv[2:]
    pairs = [(args[i], int(args[i + 1])) for i in range(0, len(args), 2)]
    sys.exit(0 if main(sys.argv[1], pairs) else 1)
