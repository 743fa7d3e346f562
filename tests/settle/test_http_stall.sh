#!/usr/bin/env bash
# A clearinghouse that takes connections and never answers (the kernel accepts them
# into a listening socket nobody serves), under mpirun -n 2 with --ch-timeout 1: each
# strategy's run fails within seconds of the deadline, not never; every rank exits 1,
# rank 0 says why once, and no file (or half file) is left.
# Usage: test_http_stall.sh LOOMDIST PYTHON WORKDIR
set -uo pipefail
bin=$(realpath "$1") python=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0
limit_s=20 # mpirun's start and end, and the 1 s deadline, on a loaded machine

# The stalled server: it listens, says its port, and never accepts, until killed.
: > port.txt
"$python" -c '
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4096)
print(s.getsockname()[1], flush=True)
time.sleep(300)' > port.txt &
stalled=$!
trap 'kill "$stalled" 2> /dev/null' EXIT
for _ in $(seq 100); do
    port=$(cat port.txt)
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: the stalled server did not start"; exit 1; }

for strategy in threads green green-pinned callbacks; do
    rm -f out.h5 out.h5.tmp
    start=$SECONDS
    timeout 60 mpirun -n 2 "$bin" --quiet --jobs settle --strategies "$strategy" \
        --trades 40 --latency-scale 0.01 --io http --clearinghouse "127.0.0.1:$port" \
        --ch-timeout 1 --output out.h5 > stdout.txt 2> stderr.txt
    rc=$? took=$((SECONDS - start))
    message="loomdist: settle/$strategy failed on 2 of 2 ranks (rank 0: Connection timed out)"
    count=$(grep -cF -- "$message" stderr.txt)
    # mpirun may SIGTERM a rank still finalizing once rank 0 has exited 1: its line
    # is mpirun's doing, not a second message of the run's.
    others=$(grep '^loomdist: ' stderr.txt | grep -vF -- "$message" |
        grep -vE '^loomdist: rank [0-9]+ interrupted by SIGTERM; no results written$' |
        grep -vc '^loomdist: the run failed; no results file$')
    if [ "$rc" != 1 ] || [ "$took" -gt "$limit_s" ] || [ "$count" != 1 ] ||
        [ "$others" != 0 ] || [ -s stdout.txt ] || [ -e out.h5 ] || [ -e out.h5.tmp ]; then
        echo "FAIL ($strategy): status $rc after ${took}s (at most ${limit_s}s), message" \
            "seen $count times, $others other lines; stderr:"
        sed 's/^/    /' stderr.txt
        fails=$((fails + 1))
    fi
done

[ "$fails" = 0 ] && echo "http stall: every strategy fails within its deadline, with one" \
    "message and no file"
exit "$((fails > 0))"
