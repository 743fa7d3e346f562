#!/usr/bin/env bash
# settle --db postgres on a private PostgreSQL of the test's own (scripts/pg-local),
# under mpirun -n 2:
#   - every strategy's statuses equal --db none's, trade for trade (the run itself has
#     compared them with the database's after each strategy run), and the run's schema
#     is gone afterwards;
#   - a bad --db-url, or a server that refuses, is exit 2 and one message;
#   - the database killed mid-run fails the run: non-zero, one line for the whole
#     run naming the database ("settle/green failed on N of 2 ranks (rank R: lost the
#     database at ...)"), no file; restarted, the same run gives --db none's statuses;
#   - the servers loomdist starts itself (--db-url local, rank0) give the same
#     statuses and are gone, process and folder, after the run, and after a run
#     whose rank was killed; missing server binaries are exit 2 and one message.
# Usage: test_db.sh LOOMDIST PYTHON WORKDIR
set -uo pipefail
bin=$(realpath "$1") py=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/ranks.sh
. "$here/../lib/ranks.sh"
pglocal=$here/../../scripts/pg-local
check=$here/../settle/check_http_io.py
# The servers' folder: under /tmp, reachable by postgres wherever the build tree is
# (tmp.sh); recorded beside the work folder, so that the next run reaps a killed run's.
# shellcheck source=../lib/tmp.sh
. "$here/../lib/tmp.sh"
pgdir=$(reaped_tmp "$work.tmp") || exit 1
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
data=$pgdir/pgdata
url=$("$pglocal" start "$data" "$port") || {
    echo "FAIL: could not start PostgreSQL"
    exit 1
}
trap '"$pglocal" stop "$data" > /dev/null 2>&1; rm -rf "$pgdir" "$work.tmp"' EXIT
trap 'exit 143' TERM # its own limit (timeout): the EXIT trap still stops the server
psql=$(for d in /usr/lib/postgresql/*/bin; do echo "$d"; done | sort -V | tail -n 1)/psql
common=(--quiet --jobs settle --trades 240 --fail-rate 0.2 --latency-scale 0.01 --os-threads 16)

# loomdist N OUT ARGS...: a run on N ranks, each rank's stderr in OUT.rank.<rank>
# (ranks.sh), then all of it in OUT.err; its status.
loomdist() {
    local n=$1 out=$2 rc=0
    shift 2
    ranks_to_files "$work/$out.rank"
    timeout 120 mpirun -n "$n" "${per_rank[@]}" "$bin" "${common[@]}" \
        --output "$work/$out.h5" "$@" > "$out.out" 2> "$out.err" || rc=$?
    ranks_said "$work/$out.rank" "$n" >> "$out.err"
    return "$rc"
}

# The run on two ranks, against sleep mode's statuses.
loomdist 2 sleep || fail "sleep run: $(cat sleep.err)"
loomdist 2 db --db postgres --db-url "$url" || fail "db run: $(cat db.err)"
"$py" "$check" same sleep.h5 db.h5 || fail "db statuses differ from sleep mode's"
left=$("$psql" -At "$url" -c "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'loomdist_%'")
[ "$left" = 0 ] || fail "the run left $left schema(s) behind"

# The private servers, under a folder of the test's own, so that what they leave is
# seen: no process whose command line names it, and nothing in it.
export TMPDIR=$pgdir/private
mkdir -p "$TMPDIR" && chmod 755 "$TMPDIR"
# private_gone WHAT: fail unless every private server and its folder went (in 15 s).
private_gone() {
    local i
    for ((i = 0; i < 150; i++)); do
        if ! pgrep -f "$TMPDIR/loomdist-pg" > /dev/null &&
            [ -z "$(find "$TMPDIR" -mindepth 1 -maxdepth 1)" ]; then
            return 0
        fi
        sleep 0.1
    done
    fail "$1 left a private server behind: $(pgrep -af "$TMPDIR/loomdist-pg")"
}
for where in local rank0; do
    loomdist 2 "$where" --db postgres --db-url "$where" || fail "--db-url $where: $(cat "$where.err")"
    "$py" "$check" same sleep.h5 "$where.h5" || fail "--db-url $where statuses differ from sleep mode's"
    private_gone "--db-url $where"
done

# A rank killed once the private servers answer: none outlives the run.
for where in local rank0; do
    timeout 120 mpirun -n 2 "$bin" --quiet --jobs settle --trades 240 --fail-rate 0.2 \
        --strategies green --iterations 5 --db postgres --db-url "$where" \
        --output "$work/crash.h5" > crash.out 2> crash.err &
    run=$!
    for ((i = 0; i < 300; i++)); do
        pgrep -f "postgres -D $TMPDIR/loomdist-pg" > /dev/null && break
        sleep 0.1
    done
    sleep 0.5
    rank=$(pgrep -f "^$bin .*$work/crash.h5" | head -n 1)
    [ -n "$rank" ] && kill -KILL "$rank"
    wait "$run" && fail "--db-url $where: the run with a killed rank exited 0"
    private_gone "--db-url $where, a rank killed,"
done

# Several pipelined connections per carrier, and the figures that count them.
loomdist 1 pipes --db postgres --db-url "$url" --db-pipes 4 --carriers 2 || fail "--db-pipes 4: $(cat pipes.err)"
"$py" "$check" same sleep.h5 pipes.h5 || fail "--db-pipes 4 statuses differ from sleep mode's"
"$py" "$here/check_figures.py" pipes.h5 16 4 2 || fail "--db-pipes 4: figures"

# With --io http too: all five calls real.
loomdist 1 both --db postgres --db-url "$url" --io http || fail "db+http run: $(cat both.err)"
"$py" "$check" same sleep.h5 both.h5 || fail "db+http statuses differ from sleep mode's"

# expect STATUS MESSAGE ARGS...: the status, the message once and from rank 0 alone,
# no file.
expect() {
    local status=$1 message=$2
    shift 2
    loomdist 2 bad "$@"
    local rc=$? said
    said=$(said_once -F "$work/bad.rank" 2 0 "loomdist: $message")
    if [ "$rc" != "$status" ] || [ -n "$said" ] || [ -e bad.h5 ] || [ -e bad.h5.tmp ]; then
        fail "($*): status $rc, ${said:-the message once}: $(cat bad.err)"
    fi
}
expect 2 "--db-url takes env, local, rank0 or a postgresql:// URL, not 'mysql://x'" --db postgres \
    --db-url mysql://x
expect 2 "--db-url and --db-pipes are for --db postgres" --db-url "$url"
expect 2 "--db-url and --db-pipes are for --db postgres" --db-pipes 2
expect 2 "cannot connect to the database at --db-url postgresql://127.0.0.1:1/x" \
    --db postgres --db-url postgresql://127.0.0.1:1/x
mkdir -p empty
LOOMDIST_PG_BINDIR=$work/empty expect 2 "--db-url local: no PostgreSQL server binaries" \
    --db postgres --db-url local
LOOMDIST_PG_BINDIR=$work/empty expect 2 "--db-url rank0: no PostgreSQL server binaries" \
    --db postgres --db-url rank0

# Killed mid-run: green at full latency, five iterations of about 0.4 s, struck once
# rank 0 says the first is done, however long the start took on a busy machine.
ranks_to_files "$work/killed.rank"
timeout 120 mpirun -n 2 "${per_rank[@]}" "$bin" --jobs settle --trades 240 \
    --fail-rate 0.2 --strategies green --iterations 5 --os-threads 16 --db postgres \
    --db-url "$url" --output "$work/killed.h5" > killed.out 2> killed.err &
run=$!
for _ in $(seq 600); do
    grep -qs 'settle/green iteration 1/5' "$work/killed.rank.0" && break
    kill -0 "$run" 2> /dev/null || break
    sleep 0.1
done
"$pglocal" kill "$data" || fail "could not kill PostgreSQL"
wait "$run"
rc=$?
ranks_said "$work/killed.rank" 2 >> killed.err
[ "$rc" != 0 ] || fail "the killed run exited 0"
# One line for the run, from rank 0, naming the database: no rank says its own.
said=$(said_once -E "$work/killed.rank" 2 0 "^loomdist: settle/green failed on [12] of 2 ranks \(rank [01]: lost the database at 127\.0\.0\.1:$port/postgres: .+\)$")
said+=$(said_once -E "$work/killed.rank" 2 0 "failed on|lost the database")
[ -z "$said" ] || fail "the killed run: $said: $(cat killed.err)"
if [ -e killed.h5 ] || [ -e killed.h5.tmp ]; then fail "the killed run left a file"; fi

# Restarted, the same run is sleep mode's.
"$pglocal" start "$data" "$port" > /dev/null || fail "could not restart PostgreSQL"
loomdist 2 again --db postgres --db-url "$url" || fail "run after restart: $(cat again.err)"
"$py" "$check" same sleep.h5 again.h5 || fail "after the restart statuses differ"

[ "$fails" = 0 ] && echo "db: statuses equal sleep mode's and the database's, bad" \
    "input exits 2, a killed database fails the run and a restart repeats it"
exit "$((fails > 0))"
