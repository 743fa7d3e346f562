#!/usr/bin/env bash
# The disk and the folder of the output, failing: on a tmpfs too small for the results,
# one that fills up during the run, and one made read-only during the run. Each time
# rank 0 says so in one line, the run exits non-zero, and nothing is left under the
# output name. Needs to mount a tmpfs (root); exits 77, skipped, where it cannot.
# Usage: test_disk.sh LOOMDIST WORKDIR
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
# A tmpfs that a run killed at its timeout left mounted (no EXIT trap runs on SIGKILL)
# goes first, so that the fresh folder is not a busy mountpoint's.
if mountpoint -q "$2/disk" 2> /dev/null; then umount "$2/disk"; fi
fresh "$2"
work=$(pwd)
disk=$work/disk
mkdir "$disk"
if ! mount -t tmpfs -o size=256k,mode=0755 loomdist-fault "$disk" 2> /dev/null; then
    echo "SKIP: cannot mount a tmpfs here"
    exit 77
fi
trap 'umount "$disk"' EXIT
out=$disk/out.h5

# Too small from the start: 20,000 trades need about a megabyte. Found before any work.
launch_ranked small 2 "$bin" --jobs settle --strategies callbacks --trades 20000 \
    --latency-scale 0.001 --output "$out"
finish_run
[ "$run_rc" -eq 2 ] || fail "a disk too small exited $run_rc, not 2"
expect_said 0 "^loomdist: cannot write --output $out: its disk has 256 KiB free, and the results need about [0-9.]+ MiB$"
did_no_work
nothing_under "$out"
verdict

# Two strategies of over a second each: the disk changes between them.
long=(--jobs settle --strategies green,callbacks --trades 200 --latency-scale 6)
mount -o remount,size=4m "$disk"

# Full by the time of the write: found before HDF5 writes a byte.
launch_ranked full 2 "$bin" "${long[@]}" --output "$out"
await 'settle/green iteration 1/1' "$LD_RANK_ERR.0" && { cat /dev/zero > "$disk/fill" 2> /dev/null || true; }
finish_run
rm -f "$disk/fill"
[ "$run_rc" -eq 1 ] || fail "a disk that filled up exited $run_rc, not 1"
expect_said 0 "^loomdist: cannot write --output $out: its disk has 0 KiB free, and the results need about [0-9]+ KiB$"
nothing_under "$out"
verdict

# Read-only by the time of the write: HDF5 cannot create the file.
launch_ranked readonly 2 "$bin" "${long[@]}" --output "$out"
await 'settle/green iteration 1/1' "$LD_RANK_ERR.0" && mount -o remount,ro "$disk"
finish_run
mount -o remount,rw "$disk"
[ "$run_rc" -eq 1 ] || fail "a read-only folder exited $run_rc, not 1"
expect_said 0 "^loomdist: could not write $out "
expect_lines 0 'Segmentation fault|Signal:'
nothing_under "$out"
verdict

finish "disk: too small, filled up or read-only, each named on rank 0 with no file left"
