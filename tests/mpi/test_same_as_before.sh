#!/usr/bin/env bash
# The same run writes the same file as before jobs described themselves: tests/data/
# before-plugins.h5 was written by the driver that named its jobs, with the command
# line it records (--pool-size was the name of --os-threads then).
# Usage: test_same_as_before.sh LOOMDIST PYTHON WORKDIR REFERENCE
set -euo pipefail
bin=$(realpath "$1") py=$2 work=$3 ref=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
mpirun -n 2 "$bin" --quiet --trades 240 --sims 500 --latency-scale 0.01 --iterations 3 \
    --strategies threads,green,callbacks,sequential,pool --os-threads 16 \
    --output after.h5 > /dev/null
"$py" "$here/check_same_as_before.py" "$ref" after.h5
