#!/usr/bin/env bash
# A settle green thread that overflows its stack, on one rank of three (the test-only
# --test-overflow-rank), in both stack modes: the report names the thread and its
# stack size, the job exits non-zero at once, and no rank is left hanging.
# Usage: test_overflow.sh LOOMDIST WORKDIR
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
fresh "$2"
work=$(pwd)

# The carrier's shared stack in copy mode, then a stack of the thread's own.
for mode in copy own; do
    launch_ranked "overflow-$mode" 3 "$bin" --jobs settle --strategies green \
        --trades 300 --latency-scale 0.05 --stack-size 16 --stack-mode "$mode" \
        --test-overflow-rank 1 --output "$work/out.h5"
    finish_run
    [ "$run_rc" -ne 0 ] || fail "an overflow in $mode mode exited 0"
    [ "$run_s" -le 30 ] || fail "the job took $run_s s to end after an overflow"
    expect_said 1 '^loomdist: green thread [0-9]+ overflowed its 16 KiB stack$'
    expect_lines 1 'rank 1 .*exited on signal 11'
    nothing_under "$work/out.h5"
    no_survivors "$work/out.h5"
    verdict
done

finish "overflow: the thread and its stack size are named, and the whole job ends"
