#!/usr/bin/env bash
# The report's predicted section: a small sweep (settle, strong 8,000 trades, 1 and 4
# nodes on the HPC platform) from a real one-rank run, then loomdist-report over that
# run with --predicted. The section and its table must say predicted and name the
# platform, its figure be drawn and linked, tables/predicted.csv must hold only
# predicted rows, and the measured tables none. A CSV row not marked predicted must be refused (status 2).
# Beside the series whose trades the calibration run has (strong and weak 8,000 at one
# node), that run must stand as the one measured point, with its own makespan; a run
# with other options (latency scale 0.1) must not, nor anything beside 8,000,000.
# Skips (77) where SimGrid is absent.
# Usage: test_report.sh LOOMDIST SKELETON PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") skel=$2 py=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
require_smpi "$skel"
rm -rf "$work" && mkdir -p "$work"
mpirun -n 1 "$bin" --trades 8000 --jobs settle --strategies green --latency-scale 0.05 \
    --quiet --output "$work/settle.h5" > /dev/null
"$py" "$top/sim/predict.py" sweep --skeleton "$skel" --nodes 1,4 --partitions block \
    --platform "$top/sim/platforms/hpc-fattree.xml" --calibration "$work/settle.h5" \
    --reference "$work/settle.h5" --out "$work/sweep.csv"
[ "$(grep -c '^predicted,hpc-fattree.xml,' "$work/sweep.csv")" = 6 ] ||
    { echo "FAIL: the sweep has not 6 predicted rows"; cat "$work/sweep.csv"; exit 1; }
mpirun -n 1 "$bin" --trades 8000 --jobs settle --strategies green --latency-scale 0.1 \
    --quiet --output "$work/other.h5" > /dev/null
"$top/analysis/loomdist-report" "$work/settle.h5" "$work/other.h5" \
    --predicted "$work/sweep.csv" -o "$work/report" > /dev/null
md=$work/report/report.md
grep -q '^## Predicted, not measured' "$md" || { echo "FAIL: no predicted section"; exit 1; }
[ "$(grep -c '^### Predicted on hpc-fattree.xml: settle, ' "$md")" = 3 ] ||
    { echo "FAIL: not three labelled tables"; exit 1; }
awk -F, 'NR > 1 && $1 != "predicted" { bad = 1 } END { exit bad }' \
    "$work/report/tables/predicted.csv" || { echo "FAIL: unlabelled row"; exit 1; }
fig=$work/report/figures/predicted_hpc-fattree_settle_strong-8000.png
[ -s "$fig" ] && grep -q '^!\[Predicted on hpc-fattree.xml: settle, strong-8000\]' "$md" ||
    { echo "FAIL: no predicted figure in the section"; exit 1; }
# The measured points: the calibration run alone, its makespan the file's own.
want=$("$py" -c 'import sys, h5py
f = h5py.File(sys.argv[1], "r"); d = f["ranks/phase_ns"]
names = d.attrs["phases"].split(",")
print(f"{sum(d[names.index(p)][0] for p in names[2:]) / 1e9:.4g}")' "$work/settle.h5")
[ "$(grep -c '^Measured, not predicted, beside it' "$md")" = 2 ] &&
    [ "$(grep -c "^| 1 | 8000 | 1 | $want | 1.00 | 1.00 |" "$md")" = 2 ] &&
    [ "$(grep -c '^No measured run is comparable' "$md")" = 1 ] ||
    { echo "FAIL: the measured points are not the calibration run's ($want s)"; exit 1; }
[ "$(grep -c '^measured,' "$work/report/tables/measured_beside_sweeps.csv")" = 2 ] ||
    { echo "FAIL: tables/measured_beside_sweeps.csv has not the two points"; exit 1; }
for t in "$work"/report/tables/*.csv; do
    [ "$(basename "$t")" = predicted.csv ] && continue
    if grep -q predicted "$t"; then echo "FAIL: predicted in $t"; exit 1; fi
done
sed 's/^predicted,/measured,/' "$work/sweep.csv" > "$work/bad.csv"
status=0
"$top/analysis/loomdist-report" "$work/settle.h5" --predicted "$work/bad.csv" \
    -o "$work/bad" 2> /dev/null || status=$?
[ "$status" = 2 ] || { echo "FAIL: an unlabelled sweep gave status $status"; exit 1; }
echo "report: ok"
