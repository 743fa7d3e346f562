"""Where shared-yield lands between shared and split, as a function of --yield-every.

Reads the HDF5 files of `loomdist --jobs mixed` runs that differ in --yield-every (a
sweep of K), and draws two panels against K: settle's p99 latency together over alone
(p99_x) and VaR's throughput together over alone (var_x), shared-yield's as a curve and
shared's, split's and oversubscribed's as lines, each the mean over the files'
iterations and ranks (the layouts other than shared-yield do not depend on K). It also
writes the numbers as CSV, one row per K.

Usage: python3 analysis/mixed_sweep.py [--out PREFIX] FILE.h5...
  writes PREFIX.png and PREFIX.csv (default PREFIX: mixed_sweep)
"""
import argparse
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

PANELS = (("p99_x", "settle p99, together / alone"),
          ("var_x", "VaR throughput, together / alone"))
FLAT = ("shared", "split", "oversubscribed")
COLUMNS = ("yield_every", "layout", "p99_x", "var_x", "settle_p99_ms", "var_per_s",
           "hold_p50_us", "hold_max_ms", "over_max")


def load(paths):
    """(K, layout) -> {figure: mean} for every mixed layout in the files."""
    rows = {}
    for path in paths:
        with h5py.File(path, "r") as f:
            if "mixed" not in f:
                sys.exit(f"mixed_sweep: {path} holds no mixed run")
            k = int(f.attrs["yield_every"])
            for layout, g in f["mixed"].items():
                rows[(k, layout)] = {c: float(np.mean(g[c][...])) for c in COLUMNS[2:]
                                     if c in g}
    return rows


def draw(rows, out):
    ks = sorted({k for k, layout in rows if layout == "shared-yield"})
    if not ks:
        sys.exit("mixed_sweep: no shared-yield run in the files")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (name, title) in zip(axes, PANELS):
        ax.plot(ks, [rows[(k, "shared-yield")][name] for k in ks], "o-",
                label="shared-yield")
        for layout in FLAT:
            vals = [v[name] for (k, lay), v in rows.items() if lay == layout]
            if vals:
                ax.axhline(np.mean(vals), linestyle="--", label=layout,
                           color={"shared": "C3", "split": "C2",
                                  "oversubscribed": "C4"}[layout])
        ax.set_xscale("log")
        ax.set_xlabel("--yield-every K (simulations between yields)")
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)


def write_csv(rows, out):
    with open(out + ".csv", "w") as f:
        f.write(",".join(COLUMNS) + "\n")
        for (k, layout), v in sorted(rows.items()):
            if layout == "shared-yield":
                f.write(",".join([str(k), layout] +
                                 [f"{v.get(c, float('nan')):.6g}" for c in COLUMNS[2:]])
                        + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="mixed_sweep")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    rows = load(args.files)
    draw(rows, args.out)
    write_csv(rows, args.out)


main()
