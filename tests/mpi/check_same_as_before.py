"""A file from before the plug-in change against the same run now.

What must hold: every dataset the old file has, the new one has, with the same shape
and type; the results that come from each trade's own streams (the book, statuses,
failed checks, VaRs) are equal bit for bit; every root attribute keeps its value, now
as a str where it was a byte string. What is new: a unit on every dataset, the result
options as root attributes, iteration_kept. Timings differ run to run and are compared
by shape only. Schema 2 dropped two /trades columns, which must follow exactly from
what it kept, as docs/schema.md says."""
import sys

import h5py
import numpy as np

EXACT = ("trades/", "/status", "/failed_check", "/var")
RUN_ATTRS = {"date", "git_commit", "command_line"}
DERIVED = {"trades/notional_cents", "trades/rank"}  # gone in schema 2
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def decoded(v):
    return v.decode() if isinstance(v, bytes) else v


def datasets(f):
    found = {}
    f.visititems(lambda n, o: found.__setitem__(n, o) if isinstance(o, h5py.Dataset) else None)
    return found


def main(old_path, new_path):
    with h5py.File(old_path, "r") as old, h5py.File(new_path, "r") as new:
        old_sets, new_sets = datasets(old), datasets(new)
        check(new.attrs["schema_version"] == 2, "schema_version is not 2")
        derived = {
            "trades/notional_cents": new["trades/price_cents"][...]
            * new["trades/quantity"][...].astype(np.int64),
            "trades/rank": np.repeat(np.arange(new.attrs["ranks"], dtype=np.int32),
                                     new["ranks/trades"][...].astype(np.int64)),
        }
        for name in DERIVED:
            check(name not in new_sets, f"{name}: still written")
            check(np.array_equal(derived[name], old[name][...]),
                  f"{name}: the kept columns do not give it")
        for name, d in old_sets.items():
            if name in DERIVED:
                continue
            n = new_sets.get(name)
            check(n is not None, f"{name}: gone")
            if n is None:
                continue
            check(n.shape == d.shape, f"{name}: shape {n.shape} != {d.shape}")
            check(n.dtype == d.dtype, f"{name}: type {n.dtype} != {d.dtype}")
            if any(k in name for k in EXACT) and n.shape == d.shape:
                check(np.array_equal(n[...], d[...]), f"{name}: values differ")
        for name, n in new_sets.items():
            check(isinstance(n.attrs.get("unit"), str), f"{name}: no str unit")
        for key, v in old.attrs.items():
            if key in RUN_ATTRS or key == "schema_version":
                continue
            check(key in new.attrs, f"root attribute {key}: gone")
            if key in new.attrs:
                check(decoded(new.attrs[key]) == decoded(v),
                      f"root attribute {key}: {new.attrs[key]!r} != {v!r}")
        check(new.attrs["partition"] == "block", "partition is not a str 'block'")
        keys = new.attrs["result_options"].split(",")
        for key in ("var_kernel", "os_threads", "pin_fraction", "fail_rate",
                    "cold_stacks", "carriers", "workers", "sims", "latency_scale"):
            check(key in keys and key in new.attrs, f"result option {key} missing")
        check(new.attrs["os_threads"] == 16, "os_threads is not 16")
        for group in ("settle/green", "var/pool"):
            check(new[group].attrs["iteration_kept"] == 2, f"{group}: iteration_kept")
            check(decoded(new[group].attrs["job"]) == decoded(old[group].attrs["job"]),
                  f"{group}: job attribute")
    for f in failures:
        print("FAIL", f)
    if failures:
        sys.exit(1)
    print(f"same as before: {len(old_sets) - len(DERIVED)} datasets and every root "
          f"attribute kept, results bit-identical, the two derived columns given by the "
          f"rest, units and result options added")


if __name__ == "__main__":
    main(*sys.argv[1:3])
