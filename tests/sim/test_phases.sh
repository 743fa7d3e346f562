#!/usr/bin/env bash
# Every run records where its wall time goes: a 2-rank run's /ranks/phase_ns holds
# each phase of each rank, adds up to no more than the run's wall time measured from
# outside, and rank 0 prints the one-line footer on stderr, never on stdout, and not
# under --quiet.
# Usage: test_phases.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
args=(--trades 2000 --jobs settle,var --sims 500 --latency-scale 0.02 --os-threads 20)
start=$(date +%s%N)
mpirun -n 2 "$bin" "${args[@]}" --output "$work/run.h5" > "$work/out.txt" 2> "$work/err.txt"
end=$(date +%s%N)
grep -q '^loomdist: phases (ms' "$work/err.txt" || { echo "FAIL: no footer"; exit 1; }
for p in startup checks book scatter prepare strategies gather write; do
    grep '^loomdist: phases' "$work/err.txt" | grep -q " $p [0-9]" ||
        { echo "FAIL: footer lacks $p"; exit 1; }
done
if grep -q 'phases' "$work/out.txt"; then echo "FAIL: footer on stdout"; exit 1; fi
mpirun -n 2 "$bin" "${args[@]}" --quiet --output "$work/quiet.h5" > /dev/null 2> "$work/q.txt"
if grep -q 'phases' "$work/q.txt"; then echo "FAIL: footer under --quiet"; exit 1; fi
"$py" "$here/check_phases.py" "$work/run.h5" 2 $(( end - start ))
"$py" "$here/check_phases.py" "$work/quiet.h5" 2 0
echo "phases: ok"
