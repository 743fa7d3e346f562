#!/usr/bin/env bash
# settle's checks as real HTTP calls give sleep mode's statuses, trade for trade, in
# every strategy, wherever the clearinghouse runs: one per rank (with and without a
# cap on checks in flight), one on rank 0 for all, and an external
# loomdist-clearinghouse this test starts on 127.0.0.1. A per-rank clearinghouse's
# stats are each run's figures, in the file and in a table of their own; sleep mode
# has neither.
# Usage: test_http_io.sh LOOMDIST CLEARINGHOUSE PYTHON WORKDIR
set -euo pipefail
bin=$(realpath "$1") ch=$(realpath "$2") py=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/clearinghouse.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
pid=
trap '[ -z "$pid" ] || kill "$pid" 2> /dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A book where a tenth of the checks fail, and a tenth of the trades take the monitor.
run() {
    local name=$1
    shift
    mpirun -n 2 "$bin" --quiet --jobs settle --trades 300 --latency-scale 0.01 \
        --fail-rate 0.1 --pin-fraction 0.1 --output "$name.h5" "$@" > "$name.out"
}
run sleep
run local --io http
run capped --io http --ch-max-inflight 4
run rank0 --io http --clearinghouse rank0

start_clearinghouse "$ch"
[ -n "$port" ] || fail "loomdist-clearinghouse did not say it listens: $(cat ch.err)"
run external --io http --clearinghouse "127.0.0.1:$port"
kill -TERM "$pid"
wait "$pid" || fail "loomdist-clearinghouse exited $? on SIGTERM"
pid=
grep -qE '^clearinghouse: [1-9][0-9]* checks served' ch.err ||
    fail "loomdist-clearinghouse served nothing: $(cat ch.err)"

"$py" "$here/check_http_io.py" same sleep.h5 local.h5 capped.h5 rank0.h5 external.h5
"$py" "$here/check_http_io.py" attrs sleep.h5 sleep local 0
"$py" "$here/check_http_io.py" attrs local.h5 http local 0
"$py" "$here/check_http_io.py" attrs capped.h5 http local 4
"$py" "$here/check_http_io.py" attrs rank0.h5 http rank0 0
"$py" "$here/check_http_io.py" attrs external.h5 http "127.0.0.1:$port" 0
"$py" "$here/check_http_io.py" figures local.h5
"$py" "$here/check_http_io.py" figures capped.h5 4
for f in sleep rank0 external; do
    "$py" "$here/check_http_io.py" nofigures "$f.h5"
done
# The figures table's rows: the green strategies' stack_spills always (in copy mode),
# the clearinghouse's only where it runs in the rank.
grep -qE '^[a-z-]+ +ch_checks ' local.out || fail "the local run printed no clearinghouse figures"
for f in sleep rank0 external; do
    if grep -qE '^[a-z-]+ +ch_' "$f.out"; then
        fail "the $f run printed clearinghouse figures it has none of"
    fi
done
echo "http io: sleep mode's statuses in every strategy from a local, capped, rank 0" \
    "and external clearinghouse; figures where one runs in the rank"
