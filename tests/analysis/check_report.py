"""Check a loomdist report against the HDF5 files it was made from.

Every number checked here is recomputed from the raw datasets with h5py and numpy
alone, without the analysis package, so a mistake in the package cannot hide itself.
Usage: check_report.py --runs DIR --report DIR --stderr FILE [--bad NAME]...
"""
import argparse
import csv
import math
import os
import re
import struct
import sys

import h5py
import numpy as np

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EXPECTED_FIGURES = ("throughput_settle.png", "throughput_var.png", "settle_latency_cdf.png",
                    "var_strong_scaling.png", "resources_settle.png", "resources_var.png")
# A phrase that names each claim the findings table must have a row for.
CLAIM_PHRASES = ("~15x faster", "collapses concurrency", "faster than plain virtual threads",
                 "fewer OS threads", "core count", "tied with sequential")
VERDICTS = {"confirmed", "refuted", "nuanced", "untested"}
REL = 1e-9
failures = []


def check(ok, message):
    """Record a failed check and go on, so one run reports every mismatch."""
    if not ok:
        failures.append(message)


def close(a, b, rel=REL):
    """The CSV keeps full precision, so values must agree to rounding."""
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-12)


def text(value):
    """HDF5 strings arrive as bytes or str depending on how they were written."""
    return value.decode() if isinstance(value, bytes) else str(value)


def read_csv(report, name):
    """One of the report's CSV tables as dicts."""
    with open(os.path.join(report, "tables", f"{name}.csv"), newline="") as handle:
        return list(csv.DictReader(handle))


def measured(runs_dir, bad):
    """Per (job, strategy, ranks): the raw numbers the report should show, from h5py."""
    out = {}
    for name in sorted(os.listdir(runs_dir)):
        if name in bad or not name.endswith(".h5"):
            continue
        with h5py.File(os.path.join(runs_dir, name), "r") as f:
            ranks, nodes = int(f.attrs["ranks"]), int(f.attrs["nodes"])
            for job in (j for j in text(f.attrs["jobs"]).split(",") if j in f):
                for strategy, g in f[job].items():
                    wall = g["wall_ns"][...].astype(float)
                    makespan = wall.max(axis=1)
                    tasks = int(g.attrs["tasks"])
                    out[(job, strategy, ranks)] = {
                        "nodes": nodes, "tasks": tasks, "time_ms": makespan.mean() / 1e6,
                        "throughput": (tasks / (makespan / 1e9)).mean(),
                        "threads": g["peak_threads"][...].max(axis=1).mean(),
                        "threads_all": g["peak_threads"][...].sum(axis=1).mean(),
                        "memory": (g["peak_rss_kib"][...].sum(axis=1) / 1024.0).mean(),
                        "imbalance": (wall.max(axis=1) / wall.mean(axis=1)).mean(),
                        "iterations": wall.shape[0]}
    return out


def check_seed_table(report, data):
    """Each seed-table row against the means recomputed from the datasets."""
    rows = read_csv(report, "seed")
    check(len(rows) == len(data), f"seed.csv has {len(rows)} rows, the files {len(data)}")
    for row in rows:
        key = (row["job"], row["strategy"], int(row["ranks"]))
        want = data.get(key)
        if want is None:
            failures.append(f"seed.csv row {key} matches no HDF5 group")
            continue
        for column, value in (("time_ms", want["time_ms"]),
                              ("throughput_ops", want["throughput"]),
                              ("peak_os_threads", want["threads"]),
                              ("os_threads_all_ranks", want["threads_all"]),
                              ("memory_mib", want["memory"]), ("tasks", want["tasks"])):
            check(close(row[column], value),
                  f"seed.csv {key} {column}: {row[column]} != {value}")
        check((row["time_ms_ci"] != "") == (want["iterations"] >= 3),
              f"seed.csv {key}: a CI must be given exactly when there are 3+ iterations")


def check_scaling(report, data):
    """Speedup, efficiency, Karp-Flatt and imbalance, recomputed from wall_ns."""
    rows = [r for r in read_csv(report, "scaling") if r["scaling"] == "strong"]
    groups = {(j, s) for j, s, _ in data}
    check(len(rows) == len(data),
          f"scaling.csv has {len(rows)} strong rows, expected {len(data)}")
    for job, strategy in groups:
        base_ranks = min(r for j, s, r in data if (j, s) == (job, strategy))
        base = data[(job, strategy, base_ranks)]["time_ms"]
        for row in (r for r in rows if (r["job"], r["strategy"]) == (job, strategy)):
            ranks = int(row["ranks"])
            want = data[(job, strategy, ranks)]
            speedup = base / want["time_ms"]
            p = ranks / base_ranks
            where = f"{job}/{strategy} at {ranks} ranks"
            check(close(row["speedup"], speedup),
                  f"{where}: speedup {row['speedup']} != {speedup}")
            check(close(row["efficiency"], speedup / p), f"{where}: efficiency")
            check(close(row["imbalance"], want["imbalance"]), f"{where}: imbalance")
            if p > 1:
                kf = (1 / speedup - 1 / p) / (1 - 1 / p)
                check(close(row["karp_flatt"], kf), f"{where}: Karp-Flatt")
            else:
                check(row["karp_flatt"] == "", f"{where}: Karp-Flatt given at p = 1")


def check_amdahl(report, data):
    """The fit, redone with numpy on the same points."""
    rows = read_csv(report, "amdahl")
    check(rows, "amdahl.csv is empty although 1, 2 and 4 ranks ran")
    for row in rows:
        points = sorted((r, v["time_ms"]) for (j, s, r), v in data.items()
                        if (j, s) == (row["job"], row["strategy"]))
        p = np.array([r for r, _ in points], dtype=float)
        t = np.array([v for _, v in points])
        (a, b), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(p), 1 / p]), t, rcond=None)
        check(close(row["base_time_ms"], a + b, 1e-6),
              f"amdahl {row['job']}/{row['strategy']}: T1")
        check(close(row["serial_fraction"], a / (a + b), 1e-6),
              f"amdahl {row['job']}/{row['strategy']}: serial fraction")


def png_ok(path):
    """A PNG signature followed by an IHDR chunk with a nonzero width and height."""
    with open(path, "rb") as handle:
        head = handle.read(33)
    if len(head) < 33 or head[:8] != PNG_SIGNATURE:
        return False
    length, kind, width, height = struct.unpack(">I4sII", head[8:24])
    return length == 13 and kind == b"IHDR" and width > 0 and height > 0


def check_figures(report, text):
    """Every expected figure is shown, and every figure shown is a real PNG."""
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    for name in EXPECTED_FIGURES:
        check(any(link.endswith(name) for link in linked), f"report.md does not show {name}")
    for link in linked:
        path = os.path.join(report, link)
        check(os.path.isfile(path) and os.path.getsize(path) > 0,
              f"figure {link} missing or empty")
        check(os.path.isfile(path) and png_ok(path), f"figure {link} is not a valid PNG")


def section(text, heading):
    """The text of one '## ' section of the report."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return match.group(1) if match else ""


def check_problems(text, stderr, bad):
    """Each bad file is named on one line of the report, and on stderr."""
    problems = section(text, "Input problems")
    for name in bad:
        lines = [line for line in problems.splitlines() if name in line]
        check(len(lines) == 1,
              f"{name} is not named on one line of the report's input problems")
        check(name in stderr, f"{name} is not named on stderr")
    check("Traceback" not in stderr, "loomdist-report printed a traceback")


def check_findings(report, text):
    """One findings row per claim, each with evidence and a known verdict."""
    rows = [line for line in section(text, "Findings").splitlines()
            if line.startswith("| ") and not line.startswith("| Claim")]
    for phrase in CLAIM_PHRASES:
        check(sum(phrase in row for row in rows) == 1,
              f"findings table needs exactly one row for the claim '{phrase}'")
    csv_rows = read_csv(report, "findings")
    check(len(csv_rows) == len(rows), "findings.csv and the findings table differ in rows")
    for row in csv_rows:
        check(row["verdict"] in VERDICTS,
              f"finding '{row['claim']}' has verdict {row['verdict']}")
        check(row["evidence"], f"finding '{row['claim']}' shows no evidence")


def check_new_schema(runs_dir, bad, text):
    """Files from a loomdist that writes result_options hold UTF-8 strings (h5py reads
    str), a unit on every strategy dataset and iteration_kept; the report's Method
    names every result option as the experiment key. Older files are left to the other
    checks."""
    method = section(text, "Method")
    for name in sorted(os.listdir(runs_dir)):
        if name in bad or not name.endswith(".h5"):
            continue
        with h5py.File(os.path.join(runs_dir, name), "r") as f:
            if "result_options" not in f.attrs:
                continue
            check(isinstance(f.attrs["result_options"], str),
                  f"{name}: result_options is not a UTF-8 string")
            check(f.attrs["partition"] in ("block", "cyclic"),
                  f"{name}: partition {f.attrs['partition']!r} does not read as str")
            for option in f.attrs["result_options"].split(","):
                if option not in ("ranks", "nodes", "ranks_per_node"):
                    check(f"`{option}`" in method,
                          f"report's Method does not list {option} in the experiment key")
            for job in (j for j in f.attrs["jobs"].split(",") if j in f):
                for strategy, g in f[job].items():
                    iterations = g["wall_ns"].shape[0]
                    kept = g.attrs.get("iteration_kept")
                    check(kept is not None and 0 <= int(kept) < iterations,
                          f"{name} {job}/{strategy}: iteration_kept {kept!r}")
                    for dataset, d in g.items():
                        check("unit" in d.attrs and isinstance(d.attrs["unit"], str),
                              f"{name} {job}/{strategy}/{dataset} has no UTF-8 unit")


def main():
    """Run every check; exit 1 listing each failure."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--stderr", required=True)
    parser.add_argument("--bad", action="append", default=[])
    args = parser.parse_args()
    with open(os.path.join(args.report, "report.md")) as handle:
        text = handle.read()
    with open(args.stderr) as handle:
        stderr = handle.read()
    data = measured(args.runs, set(args.bad))
    check(len({r for _, _, r in data}) == 3, "expected runs at three rank counts")
    check_seed_table(args.report, data)
    check_scaling(args.report, data)
    check_amdahl(args.report, data)
    check_figures(args.report, text)
    check_problems(text, stderr, args.bad)
    check_findings(args.report, text)
    check_new_schema(args.runs, set(args.bad), text)
    for message in failures:
        print(f"FAIL: {message}", file=sys.stderr)
    print(f"check_report: {len(failures)} failure(s) over {len(data)} strategy runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
