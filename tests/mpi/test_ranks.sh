#!/usr/bin/env bash
# Runs every strategy at -n 1, 2, 3 and 4 at a small latency scale, and at -n 2 with
# stacks of their own as well as copied ones, then checks that the files hold every
# trade once and agree on every status and VaR, bit for bit.
# Usage: test_ranks.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
args=(--trades 480 --sims 2000 --latency-scale 0.02 --os-threads 40 --quiet)
files=()
for n in 1 2 3 4; do
    partition=block
    [ "$n" = 3 ] && partition=cyclic
    mpirun -n "$n" "$bin" "${args[@]}" --partition "$partition" --output "$work/n$n.h5" \
        > "$work/n$n.txt"
    files+=("$work/n$n.h5")
done
mpirun -n 2 "$bin" "${args[@]}" --stack-mode own --output "$work/own.h5" > "$work/own.txt"
files+=("$work/own.h5")
"$py" "$here/check_runs.py" "${files[@]}"
# The table names every strategy of both jobs.
for s in threads green green-pinned green-monitor callbacks sequential pool steal; do
    grep -q "^$s " "$work/n4.txt" || { echo "FAIL: no table row for $s"; exit 1; }
done
