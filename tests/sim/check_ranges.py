"""Check that --partition ranges gives what block gives: in files of the same rank
count, every per-trade dataset row for row and bit for bit (the trades, each
strategy's statuses, failed checks and VaRs), and the same trades per rank. A
per-trade dataset in ns is a measured time and is left out; so are the per-rank
measurements.
Usage: check_ranges.py BLOCK.h5 RANGES.h5   (exit 1 with one line per difference)"""
import sys

import h5py


def per_trade(f):
    """{name: raw bytes} of every dataset with one row per trade, times left out."""
    n = int(f.attrs["trades"])
    out = {}

    def visit(name, o):
        if (isinstance(o, h5py.Dataset) and o.shape and o.shape[0] == n
                and not name.endswith("_ns")):
            out[name] = (o.dtype, o[...].tobytes())
    f.visititems(visit)
    return out


def main(block_path, ranges_path):
    bad = []
    with h5py.File(block_path, "r") as b, h5py.File(ranges_path, "r") as r:
        if b.attrs["partition"] != "block" or r.attrs["partition"] != "ranges":
            bad.append(f"partitions are {b.attrs['partition']} and {r.attrs['partition']}")
        if b["ranks/trades"][...].tolist() != r["ranks/trades"][...].tolist():
            bad.append("/ranks/trades differ")
        pb, pr = per_trade(b), per_trade(r)
        if sorted(pb) != sorted(pr):
            bad.append(f"per-trade datasets differ: {sorted(set(pb) ^ set(pr))}")
        for name in sorted(set(pb) & set(pr)):
            if pb[name] != pr[name]:
                bad.append(f"{name} differs")
        if not any(k.endswith(("/status", "/var")) for k in pb):
            bad.append("no status or VaR to compare")
    for line in bad:
        print("FAIL " + line, file=sys.stderr)
    if not bad:
        print(f"ranges: {len(pb)} per-trade datasets identical to block's, bit for bit")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
