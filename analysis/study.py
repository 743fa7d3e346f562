"""loomdist-study: re-run one seed study in one sitting, keep its compact data, and write
its page with every verdict computed from that data.

Usage: analysis/loomdist-study NAME [--quick | --full | --smoke] [--out DIR] [--results DIR]
                                    [--build DIR] [--peers DIR] [--note TEXT]
       analysis/loomdist-study NAME --from DATA_DIR [--out DIR]
       analysis/loomdist-study readme [README.md] [--out DIR]

NAME is settlement, pooling, models or split. A sitting keeps sitting.json (every
iteration's figures of every arm, the setup, the peers) and results.csv under
RESULTS/<date>-<cpu>/<NAME>/, then writes OUT/<NAME>.md and OUT/figures/<NAME>.png
(OUT defaults to docs/studies). --from rebuilds the page from a kept folder without
running anything. `readme` rewrites the README's block of studies from the pages.
"""
import argparse
import csv
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import claims as registry
from . import study_arms as arms_of
from . import peer_pool, study_page, verdicts

PROG = "loomdist-study"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUDIES = ("settlement", "pooling", "models", "split")
SHOWN = {
    "settlement": {"settle": ["time_ms", "ops_s", "peak_threads", "peak_rss_mib"],
                   "pinned-all": ["time_ms", "ops_s", "peak_threads", "peak_rss_mib",
                                  "status_differs"],
                   "var": ["time_ms", "ops_s", "peak_threads", "peak_rss_mib"]},
    "pooling": {a: ["rps", "p99_ms", "cgroup_peak_mib", "stack_resident_mib",
                    "capacity_mean", "frozen_mean", "stack_alloc_total_mib", "limit_hits",
                    "killed", "unserved"] for a in ("loose", "tight")},
    "models": {f"{t}-{p}": ["ops_s", "peak_rss_kib", "cgroup_peak_mib", "mem_limit_mib",
                            "cpus"] for t in ("light", "heavy") for p in ("low", "high")},
    "split": {"mixed": ["p99_x", "var_x", "over_max", "over_sum", "settle_p99_ms",
                        "alone_p99_ms", "hold_p50_us", "late_p99_ms", "differ"]},
}
FIGURE_METRIC = {"settlement": "ops_s", "pooling": "rps", "models": "ops_s",
                 "split": "p99_x"}


class StudyError(Exception):
    """Bad input (status 2) or a failed arm (status 1); one line."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


def _git(*args):
    try:
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _commit():
    """HEAD, marked when the tree has changes outside what a sitting writes."""
    head = _git("rev-parse", "--short=12", "HEAD") or "unknown"
    changed = [line for line in _git("status", "--porcelain").splitlines()
               if not re.search(r" (results|docs/studies)/", line)]
    return head + (" with uncommitted changes" if changed else "")


def _cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def _slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def _run(argv, log):
    """Run one command, its output to log; a failure is a StudyError naming it."""
    with open(log, "w") as f:
        rc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        with open(log) as f:
            tail = f.read().strip().splitlines()[-1:] or ["(no output)"]
        raise StudyError(f"{' '.join(argv)} exited {rc}: {tail[0]}", status=1)


def _arm(name, kind, opts, build, work):
    """Run one arm and read back its compact data."""
    loomdist = os.path.join(build, "loomdist")
    if kind == "loomdist":
        out = os.path.join(work, f"{name}.h5")
        argv = [loomdist, *opts, "--quiet", "--output", out]
        _run(argv, os.path.join(work, f"{name}.log"))
        data = arms_of.read_h5(out)
    else:
        out = os.path.join(work, f"{name}.json")
        split = opts.index("--")
        argv = [os.path.join(build, "loomdist-forks"), *opts[:split], "--json", out,
                "--output", os.path.join(work, f"{name}.h5"), loomdist,
                *opts[split + 1:], "--quiet"]
        _run(argv, os.path.join(work, f"{name}.log"))
        data = arms_of.read_forks_json(out)
    shown = [a for a in argv if not a.startswith(work)]
    data["command"] = " ".join(["loomdist-forks" if a.endswith("loomdist-forks") else
                                "loomdist" if a == loomdist else a for a in shown
                                if a not in ("--output", "--json")])
    return data


def _java(peers, work, runs):
    """The Java peer's runs [(label, args)], or why it is absent."""
    src = os.path.join(peers, "java", "SeedBench.java")
    if not (shutil.which("java") and shutil.which("javac")):
        return None, "java or javac not installed"
    if not os.path.exists(src):
        return None, f"no java/SeedBench.java under {peers}"
    shutil.copy(src, work)
    subprocess.run(["javac", "SeedBench.java"], cwd=work, check=True)
    out = []
    for args in runs:
        text = subprocess.run(["java", "SeedBench", *args], cwd=work, capture_output=True,
                              text=True, check=True).stdout
        for line in text.splitlines():
            m = re.match(r"(\S.*?)\s+(\d+)\s+(\d+)\s+([\d.]+) threads=(\d+)$", line)
            if m:
                out.append({"name": f"Java {m.group(1)}",
                            "command": "java SeedBench " + " ".join(args),
                            "result": f"{int(m.group(2)):,} tasks in {int(m.group(3)):,} ms, "
                                      f"{float(m.group(4)):,.1f} ops/s, "
                                      f"{m.group(5)} threads"})
    return out, None


def _go(peers, work, runs):
    """The Go peer's runs [(env, args)], or why it is absent."""
    src = os.path.join(peers, "go")
    if not shutil.which("go"):
        return None, "go not installed"
    if not os.path.isdir(src):
        return None, f"no go/ under {peers}"
    dst = os.path.join(work, "go")
    shutil.copytree(src, dst)
    subprocess.run(["go", "build", "-o", "seedbench", "."], cwd=dst, check=True)
    out = []
    for env, args in runs:
        text = subprocess.run(["./seedbench", *args], cwd=dst, capture_output=True,
                              text=True, check=True, env={**os.environ, **env}).stdout
        prefix = " ".join(f"{k}={v}" for k, v in env.items())
        out.append({"name": "Go", "command": f"{prefix} ./seedbench {' '.join(args)}".strip(),
                    "result": text.strip().splitlines()[-1] if text.strip() else "no output"})
    return out, None


def _go_pool(peers, work, mode):
    """Go's net/http peer of the pool job (analysis/peer_pool.py), a goroutine per
    connection, at the arms' connections and phases: one run per arm iteration."""
    size = {"full": (10000, 30, 30, 3), "quick": (10000, 3, 5, 3)}[mode]
    if not shutil.which("wrk"):
        return None, "wrk not installed"
    got, why = _go(peers, work, [])
    if got is None:
        return None, why
    seedbench = os.path.join(work, "go", "seedbench")
    conns, warm, measure, runs = size
    command = (f"./seedbench backend B {peer_pool.THINK_MS} & ./seedbench pool-server S "
               f"http://B/ & wrk -t1 -c{conns} -d{warm}s http://S/; "
               f"wrk -t1 -c{conns} -d{measure}s http://S/")
    return [{"name": f"Go fresh, run {i + 1}", "command": command,
             "result": f"{peer_pool.go_pool_rps(seedbench, conns, warm, measure):,.0f} "
                       "req/s"} for i in range(runs)], None


def _peers(study, mode, peers, work, cpus):
    """Run the study's peers where installed; list those absent and why."""
    ran, absent = [], []
    if mode == "smoke":
        return {"ran": [], "absent": [{"name": "every peer", "why": "not run at --smoke"}]}

    def take(name, result):
        got, why = result
        if got is None:
            absent.append({"name": name, "why": why})
        else:
            ran.extend(got)

    var_trades = "8000" if mode == "full" else "2000"
    if study == "settlement":
        take("Java (SeedBench)", _java(peers, work, [["settle", "8000"],
                                                     ["var", var_trades, "20000"]]))
        take("Go (seedbench)", _go(peers, work, [({}, ["settle", "8000"]),
                                                 ({}, ["var", var_trades, "20000"])]))
    elif study == "models":
        absent.append({"name": "Java (SeedBench)", "why": "SeedBench has no models workload "
                       "(Java 17: no virtual threads)"})
        take("Go (seedbench)", _go(peers, work, [
            ({"GOMAXPROCS": str(procs)}, ["models", tasks, "6", "1"])
            for tasks in ("1000", "50000") for procs in sorted({1, min(4, cpus)})]))
    elif study == "pooling":
        take("Go (seedbench pool-server)", _go_pool(peers, work, mode))
    else:
        absent.append({"name": "any", "why": "no peer implements the mixed workload"})
    return {"ran": ran, "absent": absent}


def _write_csv(path, arms):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["arm", "strategy", "metric", "n", "mean", "lo", "hi"])
        for arm, data in arms.items():
            for s, metrics in data["strategies"].items():
                for m, values in metrics.items():
                    est = verdicts.mean_estimate(values)
                    if est is not None:
                        w.writerow([arm, s, m, est.n, repr(est.value),
                                    "" if est.lo is None else repr(est.lo),
                                    "" if est.hi is None else repr(est.hi)])


def _sit(args):
    """Run the study's arms and peers; keep the data; return the kept folder."""
    build = os.path.abspath(args.build)
    for exe in ("loomdist", "loomdist-forks"):
        if not os.access(os.path.join(build, exe), os.X_OK):
            raise StudyError(f"no {exe} in {build}: build first (scripts/build) or give "
                             "--build DIR")
    mode = "full" if args.full else "smoke" if args.smoke else "quick"
    cpus = len(os.sched_getaffinity(0))
    load = "wrk" if shutil.which("wrk") else "builtin"
    plan = {"settlement": lambda: arms_of.settlement(mode),
            "pooling": lambda: arms_of.pooling(mode, load),
            "models": lambda: arms_of.models(mode),
            "split": lambda: arms_of.split(mode)}[args.name]()
    now = datetime.datetime.now(datetime.timezone.utc)
    cpu, commit, load_start = _cpu_model(), _commit(), _load()
    reg = registry.load()
    with tempfile.TemporaryDirectory(prefix="loomdist-study-") as work:
        arms = {}
        for name, kind, opts in plan:
            print(f"{PROG}: {args.name}: arm {name}", file=sys.stderr, flush=True)
            arms[name] = _arm(name, kind, opts, build, work)
        if args.name == "pooling" and mode == "full":
            _resolve(reg, arms, plan, build, work)
        peers = _peers(args.name, mode, args.peers, work, cpus)
    loomdist_commit = next(iter(arms.values()))["attrs"].get("git_commit", "unknown")
    folder = os.path.join(args.results, f"{now:%Y-%m-%d}-{_slug(cpu)}", args.name)
    os.makedirs(folder, exist_ok=True)
    sitting = {
        "study": args.name, "mode": mode,
        "date": f"{now:%Y-%m-%d %H:%M} UTC", "commit": commit,
        "loomdist_commit": loomdist_commit,
        "command": " ".join(["analysis/loomdist-study", args.name, f"--{mode}"]
                            + (["--note", repr(args.note)] if args.note else [])),
        "data_dir": os.path.relpath(folder, ROOT) if folder.startswith(ROOT) else folder,
        "context": {"cpus": cpus},
        "machine": {"cpus": cpus, "cpu_model": cpu, "load_generator": load,
                    "load_start": load_start, "load_end": _load()},
        "note": args.note,
        "shown": SHOWN[args.name], "figure_metric": FIGURE_METRIC[args.name],
        "arms": arms, "peers": peers,
    }
    with open(os.path.join(folder, "sitting.json"), "w") as f:
        json.dump(sitting, f, indent=1, sort_keys=True)
        f.write("\n")
    _write_csv(os.path.join(folder, "results.csv"), arms)
    return folder


def _resolve(reg, arms, plan, build, work, rounds=2):
    """--full pooling: repeat the loose arm while P1 (the +13.5%) is inconclusive, at
    most `rounds` more times."""
    claim = next(c for c in reg["claims"] if c["id"] == "P1")
    loose = next(p for p in plan if p[0] == "loose")
    for r in range(rounds):
        est = registry.measure(claim["measure"], arms_of.served(json.loads(json.dumps(arms))))
        if verdicts.judge(claim["rule"], est).verdict != "inconclusive":
            return
        print(f"{PROG}: pooling: P1 unresolved, loose round {r + 2}", file=sys.stderr)
        arms["loose"] = arms_of.merge(arms["loose"], _arm("loose", *loose[1:], build, work))


def write_page(name, data_dir, out):
    """The page and figure of a kept sitting folder."""
    path = os.path.join(data_dir, "sitting.json")
    try:
        with open(path) as f:
            sitting = json.load(f)
    except (OSError, ValueError) as err:
        raise StudyError(f"{path}: not a kept sitting ({err})")
    if sitting.get("study") != name:
        raise StudyError(f"{path} holds study {sitting.get('study')!r}, not {name!r}")
    arms_of.served(sitting["arms"])
    os.makedirs(os.path.join(out, "figures"), exist_ok=True)
    sitting["figure"] = study_page.figure(name, sitting, os.path.join(out, "figures"))
    page = os.path.join(out, f"{name}.md")
    with open(page, "w") as f:
        f.write(study_page.render(name, sitting))
    return page


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description="Re-run a seed study in one "
                                     "sitting and write its page, every verdict computed.")
    parser.add_argument("name", metavar="NAME", help="settlement, pooling, models, split, "
                        "or readme")
    parser.add_argument("readme", nargs="?", help="readme: the README to update")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="at most 5 minutes (default)")
    mode.add_argument("--full", action="store_true", help="the seeds' sizes, up to 45 min")
    mode.add_argument("--smoke", action="store_true", help="seconds: the generator's test")
    mode.add_argument("--from", dest="source", metavar="DIR", help="rebuild the page "
                      "from a kept sitting folder, running nothing")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "studies"), metavar="DIR")
    parser.add_argument("--results", default=os.path.join(ROOT, "results"), metavar="DIR")
    parser.add_argument("--build", default=os.environ.get("LOOMDIST_BUILD",
                                                          os.path.join(ROOT, "build")))
    parser.add_argument("--peers", default=os.environ.get(
        "LOOMDIST_PEERS", os.path.join(os.path.dirname(ROOT), "shared", "peers")))
    parser.add_argument("--note", default="", help="said on the page, e.g. that the "
                        "machine was shared")
    args = parser.parse_args(argv)
    try:
        if args.name == "readme":
            readme = args.readme or os.path.join(ROOT, "README.md")
            study_page.update_readme(readme, args.out)
            print(f"{PROG}: updated {readme}")
            return 0
        if args.name not in STUDIES or args.readme:
            raise StudyError(f"unknown study {args.name!r}: one of {', '.join(STUDIES)}")
        folder = args.source or _sit(args)
        page = write_page(args.name, folder, args.out)
        print(f"{PROG}: wrote {page} from {folder}")
        return 0
    except StudyError as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return err.status
    except (ValueError, OSError, subprocess.CalledProcessError) as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
