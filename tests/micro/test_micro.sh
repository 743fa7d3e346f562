#!/bin/sh
# The micro job on two ranks, small: every figure is in the file, per iteration and
# rank, with its unit, and the green side is cheaper than its reference.
set -eu
loomdist=$1 python=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
mpirun -n 2 "$loomdist" --jobs micro --micro-max 2000 --iterations 2 --quiet \
    --output "$dir/micro.h5" > "$dir/table.txt"
grep -q "green_ns" "$dir/table.txt"
exec "$python" "$(dirname "$0")/check_micro.py" "$dir/micro.h5"
