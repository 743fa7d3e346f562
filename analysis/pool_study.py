"""The pooling study's table, from the HDF5 files of `loomdist --jobs pool` runs.

One row per file and strategy, grouped by the stack mode and the memory limit the
server was granted, with what the study's tables show (requests per second and its
tail) and what they did not: the memory group's peak, the stacks the threads hold,
capacity against use, and what happened at the limit. Every figure is the mean over
the file's iterations and ranks. Runs from different CPUs (the root attribute
`cpu_model`, where the file has it) go in different sections, never one table.

Usage: analysis/loomdist-pool FILE.h5... [-o DIR]
"""
import os
import sys

import h5py
import numpy as np

from . import command_line

PROG = "loomdist-pool"
TABLE = "pool.md"
STRATEGIES = ("fresh", "pooled", "pooled-trim")
# (figure, column header, format)
COLUMNS = (
    ("rps", "req/s", "{:,.0f}"),
    ("p99_ms", "p99 ms", "{:.1f}"),
    ("cgroup_peak_mib", "group peak MiB", "{:.1f}"),
    ("rss_peak_mib", "RSS peak MiB", "{:.1f}"),
    ("stack_resident_mib", "stacks live MiB", "{:.2f}"),
    ("capacity_mean", "capacity B", "{:,.0f}"),
    ("frozen_mean", "frozen B", "{:,.0f}"),
    ("warmup_stack_alloc_mib", "allocated MiB, warm-up", "{:.1f}"),
    ("stack_alloc_mib", "allocated MiB, steady", "{:.1f}"),
    ("limit_hits", "limit hits", "{:.0f}"),
    ("killed", "OOM-killed", "{:.0f}"),
)


class InputError(Exception):
    """A file that holds no pool run; one line."""


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load(paths):
    """Every pool strategy of the files: a list of rows (key, path, strategy, figures)."""
    rows = []
    for path in paths:
        try:
            with h5py.File(path, "r") as f:
                if "pool" not in f:
                    raise InputError(f"{path}: no /pool group (not a --jobs pool run)")
                stack = text(f.attrs["stack_mode"])
                cpu = text(f.attrs.get("cpu_model", "an unnamed CPU"))
                for s in STRATEGIES:
                    if s not in f["pool"]:
                        continue
                    g = f["pool"][s]
                    fig = {name: float(np.mean(g[name][...])) for name, _, _ in COLUMNS}
                    fig["mem_limit_mib"] = float(np.mean(g["mem_limit_mib"][...]))
                    rows.append(((cpu, stack, fig["mem_limit_mib"]), path, s, fig))
        except (OSError, KeyError) as err:
            raise InputError(f"{path}: not a loomdist pool file ({err})") from err
    if not rows:
        raise InputError("no pool strategy in " + " ".join(paths))
    return rows


def table(rows):
    """Markdown: a section per CPU, stack mode and limit, a row per file and strategy."""
    out = []
    for key in sorted({r[0] for r in rows}):
        cpu, stack, limit = key
        out += [f"### {cpu}: {stack} stacks, "
                + (f"limit {limit:.0f} MiB" if limit else "no memory limit"), "",
                "| file | strategy | " + " | ".join(c[1] for c in COLUMNS) + " |",
                "|---|---|" + "---:|" * len(COLUMNS)]
        for _, path, s, fig in (r for r in rows if r[0] == key):
            cells = [fmt.format(fig[name]) for name, _, fmt in COLUMNS]
            out.append(f"| {os.path.basename(path)} | {s} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main(argv=None):
    parser = command_line(PROG, "The pooling study's table from loomdist --jobs pool HDF5 "
                          "files.", "[-o DIR] FILE.h5...")
    parser.add_argument("paths", nargs="+", metavar="FILE.h5")
    parser.add_argument("-o", "--output", default="pool-report", metavar="DIR",
                        help="folder to write (default: pool-report)")
    args = parser.parse_args(argv)
    try:
        rows = load(args.paths)
    except InputError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, TABLE)
    with open(path, "w") as f:
        f.write(table(rows))
    print(f"{PROG}: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
