#!/usr/bin/env bash
# --partition ranges (rank 0 sends each rank its first id and count, each rank builds
# its own trades) gives block's results bit for bit: at 2 and 3 ranks, every per-trade
# dataset of settle and var row for row, and the statuses and VaRs across rank counts
# (tests/mpi/check_runs.py). A run of ranges also shows every phase in the footer.
# Usage: test_ranges.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
args=(--trades 481 --jobs settle,var --strategies threads,green,callbacks,sequential,steal
    --sims 2000 --latency-scale 0.02 --os-threads 40 --quiet)
files=()
for n in 2 3; do
    for p in block ranges; do
        mpirun -n "$n" "$bin" "${args[@]}" --partition "$p" --output "$work/$p$n.h5" \
            > /dev/null
        files+=("$work/$p$n.h5")
    done
    "$py" "$here/check_ranges.py" "$work/block$n.h5" "$work/ranges$n.h5"
done
"$py" "$here/../mpi/check_runs.py" "${files[@]}"
"$py" "$here/check_phases.py" "$work/ranges3.h5" 3 0
echo "ranges: ok"
