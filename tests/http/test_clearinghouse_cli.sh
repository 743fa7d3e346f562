#!/usr/bin/env bash
# loomdist-clearinghouse as a user meets it: --help, bad input (exit 2, one line), an
# address in use (exit 1), curl against every endpoint (/think too), and SIGTERM or
# SIGINT printing the stats and exiting 0. Only 127.0.0.1; every wait is bounded.
# Usage: test_clearinghouse_cli.sh BINARY WORKDIR
set -euo pipefail
bin=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v curl > /dev/null || { echo "SKIP: no curl"; exit 77; }

"$bin" --help > "$work/help" || fail "--help exited $?"
grep -q '^Usage: loomdist-clearinghouse' "$work/help" || fail "--help printed no usage"

# bad ARGS...: exit 2 with one line on stderr that names the fault.
bad() {
    local rc=0
    "$bin" "$@" > /dev/null 2> "$work/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "'$*' exited $rc, not 2"
    [ "$(wc -l < "$work/err")" -eq 1 ] || fail "'$*' printed $(cat "$work/err")"
    grep -q '^loomdist-clearinghouse: .*(try --help)$' "$work/err" ||
        fail "'$*' printed $(cat "$work/err")"
}
bad --listen nonsense
bad --listen 127.0.0.1:99999
bad --listen 127.0.0.1:
bad --listen localhost:8470
bad --listen '[::1'
bad --max-connections 0
# Connections past what the descriptor limit leaves (it less 32) are refused.
(ulimit -n 256 && bad --max-connections 1000)
bad --request-timeout 5s
bad --bogus
bad --listen
bad extra

# start NAME ARGS...: run in the background, its port in $port once it listens.
start() {
    local name=$1
    shift
    : > "$work/$name.out" # there before the first look, which may beat the child's
    "$bin" --listen 127.0.0.1:0 "$@" > "$work/$name.out" 2> "$work/$name.err" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 100); do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)$|\1|p' \
            "$work/$name.out")
        [ -n "$port" ] && return 0
        kill -0 "$pid" 2> /dev/null || fail "$name exited: $(cat "$work/$name.err")"
        sleep 0.05
    done
    fail "$name did not say it listens"
}

# stop PID SIGNAL NAME: it exits 0 within 5 s and prints its stats.
stop() {
    local pid=$1 sig=$2 name=$3 rc=0
    kill "-$sig" "$pid"
    for _ in $(seq 100); do
        kill -0 "$pid" 2> /dev/null || break
        sleep 0.05
    done
    kill -0 "$pid" 2> /dev/null && fail "$name still runs 5 s after SIG$sig"
    wait "$pid" || rc=$?
    [ "$rc" -eq 0 ] || fail "$name exited $rc on SIG$sig"
    grep -q '^clearinghouse: [0-9]* checks served' "$work/$name.err" ||
        fail "$name printed no stats on SIG$sig: $(cat "$work/$name.err")"
}

start one
rc=0
"$bin" --listen "127.0.0.1:$port" > /dev/null 2> "$work/inuse.err" || rc=$?
[ "$rc" -eq 1 ] || fail "a second server on port $port exited $rc, not 1"
grep -q 'cannot listen on 127.0.0.1' "$work/inuse.err" || fail "$(cat "$work/inuse.err")"

# code PATH: curl's status for it, with the body in $work/body.
code() {
    curl -s --max-time 5 -o "$work/body" -w '%{http_code}' "http://127.0.0.1:$port$1"
}
q='seed=42&scale=0.01&fail=0.5'
passes=0 fails=0
for id in $(seq 0 19); do
    for check in counterparty buying-power; do
        [ "$(code "/$check?trade=$id&$q")" = 200 ] || fail "/$check of trade $id"
        case $(cat "$work/body") in
        pass) passes=$((passes + 1)) ;;
        fail) fails=$((fails + 1)) ;;
        *) fail "/$check of trade $id said $(cat "$work/body")" ;;
        esac
    done
done
[ "$passes" -gt 0 ] && [ "$fails" -gt 0 ] || fail "$passes passes and $fails fails"
shares=$(for id in $(seq 0 19); do
    code "/shares?trade=$id&$q"
    echo
done | sort | uniq -c)
grep -q ' 200$' <<< "$shares" && grep -q ' 422$' <<< "$shares" ||
    fail "shares of 20 trades: $shares"
[ "$(code "/counterparty?trade=1&seed=42&scale=0.01")" = 400 ] || fail "no fail rate"
[ "$(code "/counterparty?trade=-1&$q")" = 400 ] || fail "a negative trade"
[ "$(code "/counterparty?trade=1&seed=42&scale=0&fail=0")" = 400 ] || fail "scale 0"
[ "$(code "/elsewhere")" = 404 ] || fail "another path"
[ "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' -X POST \
    "http://127.0.0.1:$port/counterparty?trade=1&$q")" = 405 ] || fail "a POST"
# /think: "ok" no sooner than its think time, a real number of ms; bad ms is 400.
for ms in 0 2.5 50; do
    [ "$(code "/think?ms=$ms")" = 200 ] || fail "/think?ms=$ms"
    [ "$(cat "$work/body")" = ok ] || fail "/think?ms=$ms said $(cat "$work/body")"
done
took=$(curl -s --max-time 5 -o /dev/null -w '%{time_total}' \
    "http://127.0.0.1:$port/think?ms=200")
awk -v t="$took" 'BEGIN { exit !(t >= 0.2) }' || fail "/think?ms=200 took ${took}s"
for ms in -1 60001 abc '' 1e400; do
    [ "$(code "/think?ms=$ms")" = 400 ] || fail "/think?ms=$ms was not refused"
done
[ "$(code "/think")" = 400 ] || fail "/think with no ms was not refused"
sells=$(awk '$2 == 200 { print $1 }' <<< "$shares")
stop "$pid" TERM one
served=$((40 + sells + 4))
grep -q "^clearinghouse: $served checks served" "$work/one.err" ||
    fail "stats after $served checks and thinks: $(cat "$work/one.err")"

start two --max-connections 2 --request-timeout 1000
[ "$(code "/counterparty?trade=3&$q")" = 200 ] || fail "with bounds"
stop "$pid" INT two
# --stop-on-eof: the end of stdin stops it, as its parent's death would; --quiet keeps
# the stats to itself.
(sleep 0.3) | timeout 10 "$bin" --listen 127.0.0.1:0 --stop-on-eof --quiet \
    > "$work/eof.out" 2> "$work/eof.err" || fail "--stop-on-eof did not end it, 0"
grep -q "listening on" "$work/eof.out" && [ ! -s "$work/eof.err" ] ||
    fail "--stop-on-eof --quiet: $(cat "$work/eof.out" "$work/eof.err")"
# A standard input it cannot watch (a file, /dev/null) is refused at once, in one line.
rc=0
timeout 10 "$bin" --listen 127.0.0.1:0 --stop-on-eof < /dev/null > "$work/null.out" \
    2> "$work/null.err" || rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < "$work/null.err")" -eq 1 ] &&
    grep -q "^loomdist-clearinghouse: --stop-on-eof needs standard input to be a pipe" \
        "$work/null.err" || fail "--stop-on-eof < /dev/null: exit $rc, $(cat "$work/null.err")"
echo "clearinghouse cli: help, bad input, address in use, curl, signals, eof: ok"
