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

# whole_file FILE TRADES RANKS: a whole results file of one settle callbacks run:
# every dataset in it reads back in full (h5dump reads them all), the rank, trade and
# strategy groups are there, and each dataset has its length: one per trade in /trades
# and the per-trade columns, one per rank in /ranks (phase_ns: phases by ranks), one
# iteration by ranks for the strategy's other figures.
whole_file() {
    local file=$1 trades=$2 ranks=$3 bad
    h5dump "$file" > /dev/null 2> "$run_name.h5dump" ||
        { fail "$file does not read back: $(head -n 3 "$run_name.h5dump")"; return; }
    h5ls -r "$file" > "$run_name.h5ls"
    bad=$(awk -v t="$trades" -v r="$ranks" '
        $2 == "Group" { groups[$1] = 1 }
        $2 == "Dataset" {
            n++
            shape = $0; sub(/.*Dataset /, "", shape)
            if ($1 ~ /^\/trades\// || $1 ~ /^\/settle\/callbacks\/(status|latency_ns|failed_check)$/)
                want = "{" t "}"
            else if ($1 == "/ranks/phase_ns") want = "{8, " r "}"
            else if ($1 ~ /^\/ranks\//) want = "{" r "}"
            else if ($1 ~ /^\/settle\/callbacks\//) want = "{1, " r "}"
            else want = "a dataset outside the groups"
            if (shape != want) print $1 " is " shape ", not " want
        }
        END {
            split("/ranks /trades /settle/callbacks", g, " ")
            for (i in g) if (!(g[i] in groups)) print "no group " g[i]
            if (n < 20) print "only " n " datasets"
        }' "$run_name.h5ls")
    [ -z "$bad" ] || fail "$file is not a whole results file: $(echo "$bad" | tr '\n' ';')"
}

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
whole_file "$work/stale.h5" 40 2
verdict

finish "kill: a killed rank ends the job at once with nothing written; a stale temporary file is replaced"
