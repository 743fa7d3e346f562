#!/usr/bin/env bash
# The report's predicted section: a small sweep (settle, strong 8,000 trades, 1 and 4
# nodes on the HPC platform) from a real one-rank run, then loomdist-report over that
# run with --predicted. The section and its table must say predicted and name the
# platform, its figure be drawn and linked, tables/predicted.csv must hold only
# predicted rows, and the measured tables none. A CSV row not marked predicted must be refused (status 2).
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
"$top/analysis/loomdist-report" "$work/settle.h5" --predicted "$work/sweep.csv" \
    -o "$work/report" > /dev/null
md=$work/report/report.md
grep -q '^## Predicted, not measured' "$md" || { echo "FAIL: no predicted section"; exit 1; }
[ "$(grep -c '^### Predicted on hpc-fattree.xml: settle, ' "$md")" = 3 ] ||
    { echo "FAIL: not three labelled tables"; exit 1; }
awk -F, 'NR > 1 && $1 != "predicted" { bad = 1 } END { exit bad }' \
    "$work/report/tables/predicted.csv" || { echo "FAIL: unlabelled row"; exit 1; }
fig=$work/report/figures/predicted_hpc-fattree_settle_strong-8000.png
[ -s "$fig" ] && grep -q '^!\[Predicted on hpc-fattree.xml: settle, strong-8000\]' "$md" ||
    { echo "FAIL: no predicted figure in the section"; exit 1; }
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
