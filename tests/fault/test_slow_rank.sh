#!/usr/bin/env bash
# One rank much slower than the other (the test-only --test-slow-rank makes its settle
# latencies ten times longer): the run still completes, and the imbalance shows, in
# the HDF5 file's wall_ns per rank and in the table's Imbalance column.
# Usage: test_slow_rank.sh LOOMDIST PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") py=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
fresh "$3"
work=$(pwd)

launch slow mpirun -n 2 "$bin" --jobs settle --strategies green --trades 200 \
    --latency-scale 0.2 --test-slow-rank 1 --test-slow-factor 10 --output "$work/slow.h5"
finish_run
[ "$run_rc" -eq 0 ] || fail "a run with a slow rank exited $run_rc"

# Rank 1's critical path is ten times rank 0's: its wall time is well over twice.
# The file still records the latency scale asked for, not the skewed one.
"$py" - "$work/slow.h5" << 'PY' || fail "the file does not show the slow rank"
import sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    wall = f["settle/green/wall_ns"][...]
    scale = f.attrs["latency_scale"]
print(f"wall_ns per rank: {wall.tolist()}, latency_scale {scale}")
sys.exit(0 if (wall[:, 1] > 2 * wall[:, 0]).all() and scale == 0.2 else 1)
PY

# The table's last column is Imbalance, max over mean: about 10/5.5 here.
header=$(grep -m1 '^Strategy ' slow.out || true)
imbalance=$(awk '$1 == "green" { print $NF; exit }' slow.out)
[ "${header##* }" = Imbalance ] || fail "the table's last column is not Imbalance: $header"
awk -v x="$imbalance" 'BEGIN { exit !(x >= 1.4) }' ||
    fail "the table shows an imbalance of '$imbalance', not 1.4 or more"
verdict

finish "slow rank: the run completes, and wall_ns and the Imbalance column ($imbalance) show it"
