#!/usr/bin/env bash
# Interrupted during a long settle: every rank stops within seconds, says it was
# interrupted and that no results were written, and nothing is left under the output
# name. Three ways the signal comes:
# - SIGTERM or SIGINT to mpirun. Open MPI's mpirun passes either on to the ranks as
#   SIGTERM about a second later, and follows it with SIGKILL as soon as the first
#   rank is gone, so a rank that is slow to be scheduled may die before it speaks:
#   at least one rank must say it, and every rank must be gone.
# - SIGTERM to every rank at once, as a batch system's cancel sends it: each says it.
# - SIGINT to a rank run without mpirun, as Ctrl-C sends it: it names that signal and
#   dies of it.
# Usage: test_interrupt.sh LOOMDIST WORKDIR
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
fresh "$2"
work=$(pwd)

# Three iterations of about 2 s after the warm-up: the signal, which mpirun passes on
# about a second late, lands well before the last even when the CPUs are busy.
long=(--jobs settle --strategies green --trades 300 --latency-scale 5 --warmup 1
    --iterations 3)
said='interrupted by SIG(TERM|INT); no results written$'

# Each rank's stderr goes straight to a file of its own (ranks.sh): mpirun, tearing the
# job down, may drop a rank's last line on the way to its own stderr.

# job NAME: three ranks of the long settle, and once it is under way, the pids of
# mpirun and of the ranks.
job() {
    launch_ranked "$1" 3 "$bin" "${long[@]}" --output "$work/$1.h5"
    await 'warm-up 1/1' "$LD_RANK_ERR.0" || return 1
    launcher=$(child_of "$run_pid" mpirun)
    mapfile -t ranks < <(pgrep -P "$launcher" -x loomdist)
}

# ended NAME: the job ended at once, non-zero, with no file and no process left.
ended() {
    finish_run
    [ "$run_rc" -ne 0 ] || fail "the job exited 0"
    [ "$run_s" -le 10 ] || fail "the ranks took $run_s s to stop"
    expect_lines 0 'wrote|iteration 3/3'
    nothing_under "$work/$1.h5"
    no_survivors "$work/$1.h5"
}

for sig in TERM INT; do
    if job "$sig"; then
        mark
        kill -"$sig" "$launcher"
    fi
    ended "$sig"
    [ "$(lines "^loomdist: rank [0-2] $said")" -ge 1 ] || fail "no rank said it was interrupted"
    verdict
done

if job ranks; then
    mark
    kill -TERM "${ranks[@]}"
fi
ended ranks
for rank in 0 1 2; do
    grep -qE "^loomdist: rank $rank $said" "$LD_RANK_ERR.$rank" ||
        fail "rank $rank did not say it was interrupted"
done
verdict

launch alone "$bin" "${long[@]}" --output "$work/alone.h5"
if await 'warm-up 1/1'; then
    rank0=$(child_of "$run_pid" loomdist)
    mark
    kill -INT "$rank0"
fi
finish_run
[ "$run_rc" -eq 130 ] || fail "a lone rank ended with status $run_rc, not by SIGINT (130)"
[ "$run_s" -le 10 ] || fail "a lone rank took $run_s s to stop after SIGINT"
expect_lines 1 "^loomdist: rank 0 interrupted by SIGINT; no results written$"
nothing_under "$work/alone.h5"
no_survivors "$work/alone.h5"
verdict

finish "interrupt: every rank stops at once, says so where it can, and leaves no file"
