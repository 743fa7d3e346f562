#!/usr/bin/env bash
# loomdist-load as a user meets it: --help, bad input (exit 2, one line), more
# connections than the open-file limit (exit 2, naming it), a server that is not there
# (exit 1), and a run against loomdist-clearinghouse whose count of completed requests
# equals the served count in the clearinghouse's stats. Only 127.0.0.1; every wait is
# bounded.
# Usage: test_load_cli.sh LOAD CLEARINGHOUSE WORKDIR
set -euo pipefail
load=$1 ch=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2> /dev/null || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$load" --help > "$work/help" || fail "--help exited $?"
grep -q '^Usage: loomdist-load' "$work/help" || fail "--help printed no usage"

# bad ARGS...: exit 2 with one line on stderr that names the fault.
bad() {
    local rc=0
    "$load" "$@" > /dev/null 2> "$work/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "'$*' exited $rc, not 2"
    [ "$(wc -l < "$work/err")" -eq 1 ] || fail "'$*' printed $(cat "$work/err")"
    grep -q '^loomdist-load: ' "$work/err" || fail "'$*' printed $(cat "$work/err")"
}
bad
bad 127.0.0.1
bad 127.0.0.1:0
bad 127.0.0.1:70000
bad --connections 0 127.0.0.1:80
bad --connections 2 --threads 3 127.0.0.1:80
bad --duration 0 127.0.0.1:80
bad --duration 1s 127.0.0.1:80
bad --path nope 127.0.0.1:80
bad --timeout -1 127.0.0.1:80
bad --bogus 127.0.0.1:80
bad 127.0.0.1:80 extra
bad no-such-host.invalid:80

# Past the hard open-file limit, which it cannot raise, it refuses and names it.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt 1000000 ]; then
    bad --connections "$((hard - 63))" 127.0.0.1:80
    grep -q "RLIMIT_NOFILE (soft $hard, hard $hard)" "$work/err" ||
        fail "the limit's message: $(cat "$work/err")"
fi

# Nothing listens on port 1: no connection, exit 1, every failed connect counted. A
# whole second, so that a sanitized build's threads try before the time is up.
rc=0
"$load" --connections 2 --duration 1 127.0.0.1:1 > "$work/none.out" 2> /dev/null ||
    rc=$?
[ "$rc" -eq 1 ] || fail "no server: exit $rc, not 1"
grep -Eq '^requests=0 errors=[1-9]' "$work/none.out" || fail "$(cat "$work/none.out")"

# The drain: what it completed is what the clearinghouse served, exactly.
. "$(dirname "$0")/../settle/clearinghouse.sh"
cd "$work"
start_clearinghouse "$ch"
[ -n "$port" ] || fail "the clearinghouse did not start: $(cat ch.err)"
"$load" --connections 100 --threads 2 --duration 1 --path '/think?ms=10' \
    "127.0.0.1:$port" > load.out 2> load.err || fail "the run failed: $(cat load.err)"
kill -TERM "$pid"
wait "$pid" || fail "the clearinghouse exited $?"
pid=
requests=$(sed -n 's/^requests=\([0-9]*\) errors=0 .*/\1/p' load.out)
[ -n "$requests" ] && [ "$requests" -gt 0 ] || fail "$(cat load.out)"
grep -q "^clearinghouse: $requests checks served" ch.err ||
    fail "loomdist-load completed $requests, the clearinghouse: $(head -1 ch.err)"
echo "loomdist-load cli: help, bad input, open-file limit, no server, drain: ok"
