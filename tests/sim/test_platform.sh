#!/usr/bin/env bash
# predict.py platform calibrates a local platform from real loomdist-pingpong runs:
# the median latency, halved onto each link, and the median bandwidth on every link,
# with a `Calibrated:` line naming this CPU, and nothing else of the template changed.
# A template without the line, or output that is not the ping-pong's, is refused with
# one message and a nonzero status. No SimGrid needed.
# Usage: test_platform.sh PINGPONG PYTHON WORKDIR
set -euo pipefail
pingpong=$1 py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
rm -rf "$work" && mkdir -p "$work"
calibrate_local "$pingpong" "$py" "$work"
"$py" - "$work" "$top/sim/platforms/local.xml" <<'PY'
import re, statistics, sys
work, template = sys.argv[1], sys.argv[2]
runs = [open(f"{work}/pp{i}.txt").read().split() for i in (1, 2, 3)]
lat = statistics.median(float(w[w.index("latency_s") + 1]) for w in runs)
bw = statistics.median(float(w[w.index("bandwidth_Bps") + 1]) for w in runs)
out = open(f"{work}/local.xml").read()
def attr(name):
    return re.search(rf'\s{name}="([0-9.e+-]+)(GBps|us)"', out).group(1)
errors = []
if abs(float(attr("bw")) - bw / 1e9) > 0.01 * bw / 1e9:
    errors.append(f"bw {attr('bw')} GBps, median {bw / 1e9:.3g}")
if abs(float(attr("lat")) - lat / 2 * 1e6) > 0.01 * lat / 2 * 1e6:
    errors.append(f"lat {attr('lat')} us, half the median {lat / 2 * 1e6:.3g}")
for name in ("bb_bw", "loopback_bw"):
    if attr(name) != attr("bw"):
        errors.append(f"{name} {attr(name)} is not the links' {attr('bw')}")
cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
           if l.startswith("model name"))
if f"Calibrated: {cpu}, 3 loomdist-pingpong runs" not in out:
    errors.append("no Calibrated: line naming this CPU and the runs")
strip = lambda t: re.sub(r'(Calibrated:[^\n]*|\s(bb_|loopback_)?(bw|lat)="[^"]*")', "", t)
if strip(out) != strip(open(template).read()):
    errors.append("the template changed beyond its calibrated figures")
if errors:
    sys.exit("FAIL: " + "; ".join(errors))
PY
# Refusals: one line each, and a nonzero status.
grep -v Calibrated: "$top/sim/platforms/local.xml" > "$work/bare.xml"
if "$py" "$top/sim/predict.py" platform --template "$work/bare.xml" "$work/pp1.txt" \
    > /dev/null 2> "$work/err.txt"; then
    echo "FAIL: a template without a Calibrated: line was taken"
    exit 1
fi
grep -q "has no 'Calibrated:' line" "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
echo "not ping-pong output" > "$work/junk.txt"
if "$py" "$top/sim/predict.py" platform --template "$top/sim/platforms/local.xml" \
    "$work/junk.txt" > /dev/null 2> "$work/err.txt"; then
    echo "FAIL: output that is not the ping-pong's was taken"
    exit 1
fi
grep -q "is not loomdist-pingpong output" "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
echo "platform: ok"
