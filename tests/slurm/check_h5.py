"""Check one loomdist HDF5 file against what Slurm says about its job.

Usage: check_h5.py FILE --trades T --nodes N --node-names a,b,c
                   [--ranks R] [--job-id ID]

Exits 0 when every check passes, 1 with one line per failed check otherwise.
"""

import argparse
import collections
import sys

import h5py


def as_text(values):
    """Node names may be stored as variable- or fixed-length strings."""
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def attr(f, name):
    """Scalar attribute as a plain Python value (h5py returns numpy/bytes)."""
    value = f.attrs[name]
    if isinstance(value, bytes):
        return value.decode()
    if hasattr(value, "item"):
        return value.item()
    return value


def check(path, args):
    """Return the list of failed checks for the file at path."""
    errors = []
    with h5py.File(path, "r") as f:
        trades = attr(f, "trades")
        if trades != args.trades:
            errors.append(f"attribute trades is {trades}, expected {args.trades}")
        ids = f["trades/id"][...]
        if len(ids) != args.trades:
            errors.append(f"/trades/id has {len(ids)} rows, expected {args.trades}")
        dupes = [i for i, n in collections.Counter(ids.tolist()).items() if n > 1]
        if dupes:
            errors.append(f"/trades/id repeats {len(dupes)} ids, e.g. {dupes[:5]}")

        nodes = attr(f, "nodes")
        if nodes != args.nodes:
            errors.append(f"attribute nodes is {nodes}, expected {args.nodes}")

        names = as_text(f["ranks/node_name"][...])
        ranks = attr(f, "ranks")
        if len(names) != ranks:
            errors.append(f"/ranks/node_name has {len(names)} rows, ranks is {ranks}")
        if args.ranks is not None and ranks != args.ranks:
            errors.append(f"attribute ranks is {ranks}, expected {args.ranks}")
        expected = set(args.node_names.split(","))
        if set(names) != expected:
            errors.append(
                f"/ranks/node_name holds {sorted(set(names))}, "
                f"Slurm gave the job {sorted(expected)}"
            )
        per_node = max(collections.Counter(names).values()) if names else 0
        rpn = attr(f, "ranks_per_node")
        if rpn != per_node:
            errors.append(f"attribute ranks_per_node is {rpn}, the names say {per_node}")

        if args.job_id is not None:
            job = attr(f, "slurm_job_id")
            if str(job) != args.job_id:
                errors.append(f"attribute slurm_job_id is {job!r}, expected {args.job_id!r}")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--trades", type=int, required=True)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--node-names", required=True)
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--job-id")
    args = parser.parse_args()
    try:
        errors = check(args.file, args)
    except (OSError, KeyError) as exc:
        errors = [f"cannot read: {exc}"]
    for e in errors:
        print(f"{args.file}: {e}")
    if not errors:
        print(f"{args.file}: ok ({args.nodes} nodes, {args.trades} trades)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
