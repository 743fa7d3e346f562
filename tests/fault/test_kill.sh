#!/usr/bin/env bash
# A rank killed mid-run with SIGKILL: mpirun exits non-zero within seconds, the other
# ranks go too, and nothing is left under the output name. The partial temporary file
# that a writer killed mid-write leaves is named by the next run, and replaced.
# Usage: test_kill.sh LOOMDIST WORKDIR
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
fresh "$2"
work=$(pwd)

# A settle of several seconds per iteration: after the warm-up line the measured
# iteration has seconds left to run.
long=(--jobs settle --strategies green --trades 300 --latency-scale 5 --warmup 1)

launch kill mpirun -n 3 "$bin" "${long[@]}" --output "$work/kill.h5"
if await 'warm-up 1/1'; then
    launcher=$(child_of "$run_pid" mpirun)
    victim=$(pgrep -P "$launcher" -x loomdist | sed -n 2p)
    mark
    kill -KILL "$victim"
fi
finish_run
[ "$run_rc" -ne 0 ] || fail "mpirun exited 0 after a rank was killed"
[ "$run_s" -le 10 ] || fail "mpirun took $run_s s to end after a rank was killed"
expect_lines 1 'exited on signal 9'
nothing_under "$work/kill.h5"
no_survivors "$work/kill.h5"
verdict

# A killed writer's leftover: the next run says it replaces it, and does.
head -c 10000 /dev/urandom > "$work/stale.h5.tmp"
launch stale mpirun -n 2 "$bin" --jobs settle --strategies callbacks --trades 40 \
    --latency-scale 0.01 --output "$work/stale.h5"
finish_run
[ "$run_rc" -eq 0 ] || fail "a run over a stale temporary file exited $run_rc"
expect_lines 1 "^loomdist: replacing $work/stale.h5.tmp, left by an interrupted run$"
[ ! -e "$work/stale.h5.tmp" ] || fail "the stale temporary file is still there"
h5ls "$work/stale.h5" | grep -q '^trades ' || fail "stale.h5 is not a whole results file"
verdict

finish "kill: a killed rank ends the job at once with nothing written; a stale temporary file is replaced"
