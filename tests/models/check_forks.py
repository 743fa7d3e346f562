"""Check loomdist-forks' JMH JSON against the forks' HDF5 files: every field JMH
writes, scoreError recomputed as t(0.9995, n - 1) * s / sqrt(n), the percentiles as JMH
estimates them, a fresh process per fork, and the capped pool's rounds."""
import json
import math
import sys

import h5py
import numpy as np

try:
    from scipy import stats as scipy_stats
except ImportError:  # the t quantiles of the n this test uses
    scipy_stats = None
T_9995 = {5: 6.868827, 24: 3.745399}
PERCENTILES = ("0.0", "50.0", "90.0", "95.0", "99.0", "99.9", "99.99", "99.999",
               "99.9999", "100.0")
FIELDS = ("benchmark", "mode", "threads", "forks", "warmupIterations", "warmupTime",
          "warmupBatchSize", "measurementIterations", "measurementTime",
          "measurementBatchSize", "params", "primaryMetric", "secondaryMetrics", "pids")
METRIC_FIELDS = ("score", "scoreError", "scoreConfidence", "scorePercentiles",
                 "scoreUnit", "rawData")


def t_quantile(df):
    return float(scipy_stats.t.ppf(0.9995, df)) if scipy_stats else T_9995[df]


def percentile(sorted_v, p):
    """Apache Commons Math's legacy estimate, JMH's."""
    n = len(sorted_v)
    pos = p * (n + 1) / 100
    if pos < 1:
        return sorted_v[0]
    if pos >= n:
        return sorted_v[-1]
    lo = int(pos)
    return sorted_v[lo - 1] + (pos - lo) * (sorted_v[lo] - sorted_v[lo - 1])


def close(a, b, rel=1e-3):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def check_metric(m, forks, iterations, name):
    """One metric object: its fields, and the arithmetic of each from rawData."""
    assert set(METRIC_FIELDS) <= set(m), (name, sorted(m))
    raw = m["rawData"]
    assert len(raw) == forks and all(len(r) == iterations for r in raw), (name, raw)
    x = np.array(raw, dtype=float).ravel()
    n = x.size
    assert close(m["score"], x.mean(), 1e-12), (name, m["score"], x.mean())
    err = t_quantile(n - 1) * x.std(ddof=1) / math.sqrt(n)
    assert close(m["scoreError"], err), (name, m["scoreError"], err)
    lo, hi = m["scoreConfidence"]
    assert close(lo, m["score"] - m["scoreError"], 1e-12), name
    assert close(hi, m["score"] + m["scoreError"], 1e-12), name
    assert tuple(m["scorePercentiles"]) == PERCENTILES, (name, list(m["scorePercentiles"]))
    s = sorted(x)
    for key, v in m["scorePercentiles"].items():
        assert close(v, percentile(s, float(key)), 1e-12), (name, key, v)
    return x


def fork_files(path, forks):
    stem = path[:-3]
    return [h5py.File(f"{stem}.fork{k + 1}.h5", "r") for k in range(forks)]


def check_bench(b, files, forks, iterations):
    """Method, params and metrics of one benchmark, each raw value the file's."""
    assert set(FIELDS) <= set(b), sorted(b)
    job, model = b["benchmark"].split(".")[1:]
    assert b["benchmark"] == f"loomdist.models.{model}" and job == "models"
    assert b["mode"] == "thrpt" and b["forks"] == forks
    assert b["warmupIterations"] == int(files[0].attrs["warmup"])
    assert b["measurementIterations"] == iterations
    assert b["threads"] == int(files[0].attrs["ranks"])
    p = b["params"]
    assert p["model"] == model and p["profile"] == "low", p
    assert p["tasks"] == str(int(files[0].attrs["tasks"])), p
    pm = b["primaryMetric"]
    assert pm["scoreUnit"] == "ops/s"
    x = check_metric(pm, forks, iterations, model)
    wall = np.concatenate([f[f"models/{model}/wall_ns"][...] for f in files])
    assert np.allclose(x, 1e9 / wall.max(axis=1), rtol=1e-12), (x, wall)
    sec = b["secondaryMetrics"]
    for name in ("peak_threads", "peak_rss_kib", "clamped", "cpus", "cpus_asked"):
        y = check_metric(sec[name], forks, iterations, f"{model}.{name}")
        v = np.concatenate([f[f"models/{model}/{name}"][...] for f in files])
        assert np.allclose(y, v.max(axis=1)), (name, y, v)
    assert sec["peak_threads"]["scoreUnit"] == "threads"
    assert sec["peak_rss_kib"]["scoreUnit"] == "KiB"
    return x


def check_pids(b, files, forks):
    """Each fork a new process on every rank: all different, as each file records."""
    pids = b["pids"]
    assert len(pids) == forks, pids
    for k, f in enumerate(files):
        assert list(f["ranks/pid"][...]) == pids[k], (k, pids[k])
        assert int(f.attrs["fork"]) == k + 1 and int(f.attrs["forks"]) == forks
    flat = [p for fork in pids for p in fork]
    assert len(set(flat)) == len(flat) and all(p > 0 for p in flat), pids


def check_capped(scores, files):
    """100 threads for 400 tasks: an operation takes at least 4 delays, every sample
    of it; green's, uncapped, takes less, every sample of it."""
    f = files[0]
    rounds = math.ceil(int(f.attrs["tasks"]) / int(f.attrs["thread_cap"]))
    assert rounds == 4
    bound_ops = 1e3 / (rounds * float(f.attrs["delay_ms"]))
    assert np.all(scores["threads"] <= bound_ops), (scores["threads"], bound_ops)
    assert np.all(scores["green"] > bound_ops), (scores["green"], bound_ops)


def check_figure(folder, report):
    """The figure is a PNG of some size, and the table gives each model's score at
    each load, as its JSON file has it."""
    with open(f"{report}/models_ops.png", "rb") as png:
        data = png.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000, len(data)
    with open(f"{report}/models.md") as md:
        rows = {tuple(c.strip() for c in line.split("|")[1:3]): line
                for line in md if line.startswith("| low")}
    for tasks in (100, 300):
        with open(f"{folder}/models-{tasks}.json") as j:
            doc = json.load(j)
        row = rows[("low", f"{tasks:,}")]
        for b in doc:
            assert f"{b['primaryMetric']['score']:.3g} ±" in row, (row, b["benchmark"])
    print("forks figure ok")


def main(case, json_path, h5_path):
    if case == "figure":
        return check_figure(json_path, h5_path)
    with open(json_path) as j:
        doc = json.load(j)
    forks, iterations = (3, 2) if case == "forks" else (5, 5)
    files = fork_files(h5_path, forks)
    assert [b["params"]["model"] for b in doc] == (
        ["green", "hybrid", "threads"] if case == "forks" else ["green"])
    scores = {}
    for b in doc:
        scores[b["params"]["model"]] = check_bench(b, files, forks, iterations)
        check_pids(b, files, forks)
    if case == "forks":
        assert all(b["threads"] == 2 for b in doc)
        check_capped(scores, files)
    else:
        assert doc[0]["warmupIterations"] == 3
    print(f"forks {case} ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
