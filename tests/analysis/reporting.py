"""Running loomdist-report as a user would, and reading what it wrote, for the tests."""
import csv
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMAND = os.path.join(ROOT, "analysis", "loomdist-report")


def report(*paths, out):
    """Run the command; returns (exit status, stderr, report.md text or None)."""
    done = subprocess.run([COMMAND, *paths, "-o", out], capture_output=True, text=True,
                          timeout=120)
    md = os.path.join(out, "report.md")
    if done.returncode != 0 or not os.path.exists(md):
        return done.returncode, done.stderr, None
    with open(md) as handle:
        return done.returncode, done.stderr, handle.read()


def rows(out, name):
    """One of the report's CSV tables as dicts."""
    with open(os.path.join(out, "tables", f"{name}.csv"), newline="") as handle:
        return list(csv.DictReader(handle))
