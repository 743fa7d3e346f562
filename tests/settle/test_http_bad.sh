#!/usr/bin/env bash
# settle's http options, mistyped or pointed at nothing, under mpirun -n 2: an option
# error exits 2 with its one message; an external clearinghouse that refuses
# connections, or a host that does not resolve, fails the run before any work: every
# rank exits 1, rank 0 says why once, and no file (or half file) is left.
# Usage: test_http_bad.sh LOOMDIST CLEARINGHOUSE WORKDIR
set -uo pipefail
bin=$(realpath "$1") ch=$(realpath "$2") work=$3
. "$(cd "$(dirname "$0")" && pwd)/clearinghouse.sh"
# shellcheck source=../lib/ranks.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/ranks.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0

# expect STATUS MESSAGE ARGS...: the status, the message once and from rank 0 alone
# (each rank's stderr in a file of its own, ranks.sh), no other line of loomdist's but
# the run's failure, nothing on stdout, no file.
expect() {
    local status=$1 message=$2 said others
    shift 2
    rm -f out.h5 out.h5.tmp
    ranks_to_files "$PWD/rank"
    timeout 60 mpirun -n 2 "${per_rank[@]}" "$bin" --quiet --jobs settle --trades 40 \
        --latency-scale 0.01 --output out.h5 "$@" > stdout.txt 2> stderr.txt
    local rc=$?
    said=$(said_once -F "$PWD/rank" 2 0 "loomdist: $message")
    ranks_said "$PWD/rank" 2 >> stderr.txt
    others=$(grep '^loomdist: ' stderr.txt | grep -vF -- "loomdist: $message" |
        grep -vc '^loomdist: the run failed; no results file$')
    if [ "$rc" != "$status" ] || [ -n "$said" ] || [ "$others" != 0 ] ||
        [ -s stdout.txt ] || [ -e out.h5 ] || [ -e out.h5.tmp ]; then
        echo "FAIL ($*): status $rc, ${said:-the message once}, $others other lines," \
            "stdout $(wc -c < stdout.txt) bytes; stderr:"
        sed 's/^/    /' stderr.txt
        fails=$((fails + 1))
    fi
}

expect 2 "--io takes sleep|http, not 'bogus'" --io bogus
expect 2 "--clearinghouse takes local, rank0 or HOST:PORT (a port from 1 to 65535; an" \
    --io http --clearinghouse nohost:notaport
expect 2 "--clearinghouse takes local, rank0 or HOST:PORT" --io http --clearinghouse ::1:80
expect 2 "--clearinghouse and --ch-max-inflight are for --io http" --clearinghouse rank0
expect 2 "--clearinghouse and --ch-max-inflight are for --io http" --ch-max-inflight 8
expect 2 "--ch-max-inflight caps a clearinghouse loomdist starts" --io http \
    --clearinghouse 127.0.0.1:8470 --ch-max-inflight 8
expect 2 "--clearinghouse takes local|rank0|HOST:PORT: a word" --io http \
    --clearinghouse 'two words'

# A port nobody listens on: one a clearinghouse had until it was stopped.
start_clearinghouse "$ch"
kill -TERM "$pid"
wait "$pid"
if [ -z "$port" ]; then
    echo "FAIL: loomdist-clearinghouse did not say it listens: $(cat ch.err)"
    exit 1
fi
expect 1 "settle: cannot reach the clearinghouse at 127.0.0.1:$port: Connection refused" \
    --io http --clearinghouse "127.0.0.1:$port"
expect 1 "settle: cannot resolve the clearinghouse's host 'no-such-host.invalid'" \
    --io http --clearinghouse no-such-host.invalid:8470

[ "$fails" = 0 ] && echo "http bad input: option errors exit 2, an unreachable" \
    "clearinghouse fails the run with one message and no file"
exit "$((fails > 0))"
