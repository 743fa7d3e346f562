#!/usr/bin/env bash
# Peak OS threads is a floor that short runs reach: every rank reports at least the
# threads its strategy made and held at once, plus the thread that ran it, however
# short the run, at -n 2 and -n 4. A 1 ms sampler alone reported 22-67 for a pool of 200.
# Usage: test_peak_threads.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"

for n in 2 4; do
    mpirun -n "$n" "$bin" --quiet --jobs settle --strategies threads --os-threads 200 \
        --latency-scale 0.001 --trades 400 --output "pool-$n.h5" > /dev/null
    "$py" "$here/check_peak_threads.py" "pool-$n.h5" settle/threads 201
    mpirun -n "$n" "$bin" --quiet --jobs settle,var --strategies green,callbacks,var/green \
        --carriers 4 --latency-scale 0.001 --trades 400 --sims 200 \
        --output "carriers-$n.h5" > /dev/null
    "$py" "$here/check_peak_threads.py" "carriers-$n.h5" settle/green 5 \
        settle/callbacks 5 var/green 5
    mpirun -n "$n" "$bin" --quiet --jobs var --strategies pool,steal --workers 4 \
        --trades 64 --sims 200 --output "workers-$n.h5" > /dev/null
    "$py" "$here/check_peak_threads.py" "workers-$n.h5" var/pool 5 var/steal 5
done
echo "peak threads: every strategy's own threads counted on every rank, at -n 2 and 4"
