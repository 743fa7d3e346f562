#!/usr/bin/env bash
# What the strategies' measurements must show, at a small latency scale:
# thread counts against the pool size, pinning against the monitor, and the CI column.
# Usage: test_strategies.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"

# A pool of 64 threads shows 64 or more OS threads per rank; green stays below.
mpirun -n 2 "$bin" --quiet --jobs settle --strategies threads,green --trades 400 \
    --latency-scale 0.02 --os-threads 64 --output threads.h5 > /dev/null
"$py" "$here/check_strategies.py" threads threads.h5 64

# One carrier, so a blocked carrier is visible: half the trades pinned against none.
for f in 0 0.5; do
    mpirun -n 1 "$bin" --quiet --jobs settle --strategies green-pinned,green-monitor \
        --trades 200 --latency-scale 0.05 --carriers 1 --pin-fraction "$f" \
        --output "pin-$f.h5" > /dev/null
done
"$py" "$here/check_strategies.py" pinning pin-0.h5 pin-0.5.h5

# ran NAME COMMAND...: the command's output (stdout and stderr) in NAME.txt, and the
# test failed unless it exited 0 with a table. A check that something is absent from
# the output must hold of a run that finished, not of a crash, which prints nothing.
ran() {
    local name=$1 rc=0
    shift
    "$@" > "$name.txt" 2>&1 || rc=$?
    if [ "$rc" != 0 ] || ! grep -q '^Strategy ' "$name.txt"; then
        echo "FAIL: $name exited $rc, or printed no table:"
        cat "$name.txt"
        exit 1
    fi
}

# The table shows mean ± half-width once there are 3 iterations, and not before.
run_var() {
    ran "ci-$1" mpirun -n 1 "$bin" --quiet --jobs var --strategies sequential --trades 20 \
        --sims 500 --iterations "$1" --output "ci-$1.h5"
}
run_var 3
grep -qE '^sequential .*[0-9] ± [0-9]' ci-3.txt || { echo "FAIL: no ± with --iterations 3"; exit 1; }
run_var 2
grep -qE '^sequential ' ci-2.txt || { echo "FAIL: no sequential row with --iterations 2"; exit 1; }
if grep -q '±' ci-2.txt; then
    echo "FAIL: a ± with only 2 iterations"
    exit 1
fi
echo "strategies: thread counts, pinning and CI all as expected"

# --trace-pinning reports a blocked carrier, with a backtrace through the blocking
# sleep, for a pinned run, and nothing for a plain green run.
trace() {
    ran "trace-$1" mpirun -n 1 "$bin" --quiet --jobs settle --strategies "$1" --trades 60 \
        --carriers 1 --latency-scale 0.2 --pin-fraction 0.1 --trace-pinning \
        --output "trace-$1.h5"
}
trace green-pinned
grep -qE '^loomdist: carrier 0 pinned by green thread [0-9]+ for [0-9.]+ ms at:' \
    trace-green-pinned.txt || { echo "FAIL: green-pinned made no pinning report"; exit 1; }
grep -q 'ld_settle_block_ns' trace-green-pinned.txt ||
    { echo "FAIL: the pinning report has no backtrace through the blocking call"; exit 1; }
trace green
if grep -q 'pinned by' trace-green.txt; then
    echo "FAIL: a plain green run reported pinning"
    exit 1
fi
echo "trace-pinning: reports pinned carriers with a backtrace, and only those"
