#!/usr/bin/env bash
# callbacks waits the same deadlines as green, to the same resolution: at a latency
# scale whose calls last 20 µs to 3.2 ms, its makespan sits as close to the critical
# path as green's, and its trades' latencies are not whole milliseconds.
#
# Up to three runs: a stall from outside (another process on a shared machine) can
# spoil one run's timings, while the fault this guards against, a timer that rounds
# each call to whole milliseconds, fails every run.
# Usage: test_callbacks_deadlines.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
for try in 1 2 3; do
    mpirun -n 1 "$bin" --quiet --jobs settle --strategies green,callbacks --trades 400 \
        --latency-scale 0.02 --warmup 1 --iterations 3 --output deadlines.h5 > /dev/null
    if "$py" "$here/check_callbacks_deadlines.py" deadlines.h5; then
        exit 0
    fi
    echo "run $try of 3 failed" >&2
    rm -f deadlines.h5
done
exit 1
