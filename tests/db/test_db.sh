#!/usr/bin/env bash
# settle --db postgres on a stock PostgreSQL of the test's own (scripts/pg-local: a
# default initdb, nothing tuned, max_connections 100; loopback with a password):
#   - every strategy at the defaults, at -n 1 and -n 4, its statuses equal --db
#     none's (and the run has compared them with the database's after each strategy
#     run); a run of green and callbacks opens only their connections; a run that
#     would not fit is refused before any work, with one line naming what to lower;
#   - a URL's password never shows in a message;
#   - the servers loomdist starts itself let no one else in: --db-url local has no
#     TCP at all, --db-url rank0 refuses a connection without its password, lets in
#     the job's node addresses only, and its password is on no command line;
# and, under mpirun -n 2:
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
    echo "FAIL ($SECONDS s): $*"
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
# The password pg-local made, for loomdist and psql, through libpq's password file.
export PGPASSFILE=$data/pgpass
psql=$(for d in /usr/lib/postgresql/*/bin; do echo "$d"; done | sort -V | tail -n 1)/psql
common=(--quiet --jobs settle --trades 240 --fail-rate 0.2 --latency-scale 0.01 --os-threads 16)

max=$("$psql" -At "$url" -c "SHOW max_connections")
[ "$max" = 100 ] || fail "the test's server is not a stock one: max_connections $max"
# Without its password the server takes no one over TCP.
if PGPASSFILE=/dev/null "$psql" -w -At "$url" -c "SELECT 1" > /dev/null 2>&1; then
    fail "pg-local's server let in a connection without its password"
fi

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

# Sleep mode's statuses on two ranks, which the runs below must give.
loomdist 2 sleep || fail "sleep run: $(cat sleep.err)"

# Every strategy at the defaults (200 OS threads, --db-conns 10) on the stock server,
# at -n 1 and -n 4, against --db none at the same rank count.
stock=(--quiet --jobs settle --trades 240 --fail-rate 0.2 --latency-scale 0.01)
for n in 1 4; do
    timeout 120 mpirun -n "$n" "$bin" "${stock[@]}" --output "$work/stock-sleep$n.h5" \
        > "stock-sleep$n.out" 2>&1 || fail "-n $n --db none: $(cat "stock-sleep$n.out")"
    timeout 120 mpirun -n "$n" "$bin" "${stock[@]}" --db postgres --db-url "$url" \
        --output "$work/stock$n.h5" > "stock$n.out" 2>&1 ||
        fail "-n $n on a stock server: $(cat "stock$n.out")"
    "$py" "$check" same "stock-sleep$n.h5" "stock$n.h5" || fail "-n $n stock: statuses differ"
    "$py" "$here/check_figures.py" "stock$n.h5" 10 1 1 || fail "-n $n stock: figures"
done
left=$("$psql" -At "$url" -c "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'loomdist_%'")
[ "$left" = 0 ] || fail "the runs left $left schema(s) behind"
# Strategies on carriers alone open their pipes and nothing for threads: one rank of
# 2 carriers x 1 pipe holds 2 connections, and its check the third.
loomdist 1 carriers --db postgres --db-url "$url" --carriers 2 --strategies green,callbacks ||
    fail "green,callbacks: $(cat carriers.err)"
"$py" "$here/check_figures.py" backends carriers.h5 3 || fail "green,callbacks opened more than they need"
# A password in the URL is what libpq uses, and the results file's command line, which
# anyone who can read the file sees, shows it masked.
pw=$(cut -d: -f5 "$PGPASSFILE")
PGPASSFILE=/dev/null loomdist 1 inurl --db postgres \
    --db-url "postgresql://postgres:$pw@127.0.0.1:$port/postgres?password=$pw" ||
    fail "a URL with its password: $(cat inurl.err)"
shown=$("$py" -c 'import h5py, sys
c = h5py.File(sys.argv[1], "r").attrs["command_line"]
print(c.decode() if isinstance(c, bytes) else c)' "$work/inurl.h5")
case $shown in
*"$pw"*) fail "the results file's command line holds the password: $shown" ;;
*"postgresql://***@127.0.0.1:$port/postgres?password=***"*) ;;
*) fail "the results file's command line does not show the URL masked: $shown" ;;
esac

# A run that would not fit: refused before any work, naming what to lower; no schema.
expect_refused() {
    local out=$1 message=$2
    shift 2
    timeout 120 mpirun -n 4 "$bin" "${stock[@]}" --output "$work/$out.h5" "$@" > "$out.out" 2>&1
    local rc=$? count
    count=$(grep -cF -- "$message" "$out.out")
    if [ "$rc" = 0 ] || [ "$count" != 1 ] || [ -e "$out.h5" ] || [ -e "$out.h5.tmp" ]; then
        fail "($*): status $rc, message seen $count times: $(cat "$out.out")"
    fi
}
expect_refused toomany "loomdist: settle: the database at 127.0.0.1:$port/postgres takes" \
    --db postgres --db-url "$url" --db-conns 40
grep -q "lower --db-conns, or run fewer ranks" toomany.out || fail "the refusal names no option to lower: $(cat toomany.out)"
expect_refused toomany-pipes "lower --carriers or --db-pipes, or run fewer ranks" \
    --db postgres --db-url "$url" --strategies green --db-pipes 40
left=$("$psql" -At "$url" -c "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'loomdist_%'")
[ "$left" = 0 ] || fail "the refused runs left $left schema(s) behind"

# The private servers, under a folder of the test's own, so that what they leave is
# seen: no process whose command line names it, and nothing in it.
export TMPDIR=$pgdir/private
mkdir -p "$TMPDIR" && chmod 711 "$TMPDIR"
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

# no_one_else WHERE PIDFILE: the running private server lets no one in but the run:
# local has no TCP at all and its folder is 0700; rank0 takes TCP only with its
# password, only from the job's addresses, and the password is on no command line.
no_one_else() {
    local where=$1 pidfile=$2 folder p addr hba
    folder=$(dirname "$(dirname "$pidfile")")
    p=$(sed -n 4p "$pidfile") addr=$(sed -n 6p "$pidfile")
    [ "$(stat -c %a "$folder")" = 700 ] || fail "--db-url $where: its folder is mode $(stat -c %a "$folder")"
    hba=$folder/data/pg_hba.conf
    if grep -E '^host' "$hba" | grep -qvE '^host +all +postgres +[0-9a-f.:]+/(32|128) +scram-sha-256$'; then
        fail "--db-url $where: pg_hba.conf lets in more than the job's addresses: $(grep '^host' "$hba")"
    fi
    if [ "$where" = local ]; then
        [ -z "$addr" ] || fail "--db-url local listens on TCP at '$addr'"
        if PGPASSFILE=/dev/null "$psql" -w -At "host=127.0.0.1 port=$p user=postgres dbname=postgres" \
            -c "SELECT 1" > /dev/null 2>&1; then
            fail "--db-url local: a connection over TCP got in"
        fi
        return
    fi
    [ -n "$addr" ] || fail "--db-url rank0 does not listen on TCP"
    out=$(PGPASSFILE=/dev/null "$psql" -w -At "host=$addr port=$p user=postgres dbname=postgres" \
        -c "SELECT 1" 2>&1) && fail "--db-url rank0: a connection without the password got in"
    echo "$out" | grep -q "password" || fail "--db-url rank0: refused, but not for its password: $out"
    # The run's processes: the ranks, the watcher and the server.
    local args
    args=$(pgrep -af "$TMPDIR/loomdist-pg|$work/crash.h5")
    if echo "$args" | grep -qE '(^|[^0-9a-f])[0-9a-f]{48}([^0-9a-f]|$)'; then
        fail "--db-url rank0: a command line holds the password: $args"
    fi
}

# A rank killed once the private servers answer: none outlives the run.
for where in local rank0; do
    timeout 120 mpirun -n 2 "$bin" --quiet --jobs settle --trades 240 --fail-rate 0.2 \
        --strategies green --iterations 5 --db postgres --db-url "$where" \
        --output "$work/crash.h5" > crash.out 2> crash.err &
    run=$!
    for ((i = 0; i < 300; i++)); do
        pidfile=$(find "$TMPDIR" -path '*/data/postmaster.pid' 2> /dev/null | head -n 1)
        [ -n "$pidfile" ] && sed -n 8p "$pidfile" 2> /dev/null | grep -q "^ready" && break
        sleep 0.1
    done
    sleep 0.5
    no_one_else "$where" "$pidfile"
    rank=$(pgrep -f "^$bin .*$work/crash.h5" | head -n 1)
    [ -n "$rank" ] && kill -KILL "$rank"
    wait "$run" && fail "--db-url $where: the run with a killed rank exited 0"
    private_gone "--db-url $where, a rank killed,"
done

# Several pipelined connections per carrier, and the figures that count them.
loomdist 1 pipes --db postgres --db-url "$url" --db-pipes 4 --carriers 2 || fail "--db-pipes 4: $(cat pipes.err)"
"$py" "$check" same sleep.h5 pipes.h5 || fail "--db-pipes 4 statuses differ from sleep mode's"
"$py" "$here/check_figures.py" pipes.h5 10 4 2 || fail "--db-pipes 4: figures"

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
expect 2 "--db-url, --db-pipes and --db-conns are for --db postgres" --db-url "$url"
expect 2 "--db-url, --db-pipes and --db-conns are for --db postgres" --db-pipes 2
expect 2 "--db-url, --db-pipes and --db-conns are for --db postgres" --db-conns 4
expect 2 "cannot connect to the database at --db-url postgresql://127.0.0.1:1/x" \
    --db postgres --db-url postgresql://127.0.0.1:1/x
# A URL's user information and password never show.
expect 2 "cannot connect to the database at --db-url postgresql://***@127.0.0.1:1/x?password=***" \
    --db postgres --db-url "postgresql://u:sekrit@127.0.0.1:1/x?password=sekrit2"
grep -q sekrit bad.err && fail "a message showed the URL's password: $(cat bad.err)"
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
