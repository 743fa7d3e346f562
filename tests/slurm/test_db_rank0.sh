#!/usr/bin/env bash
# test_db_rank0.sh LOOMDIST SOURCE_DIR WORK_DIR PYTHON
#
# settle --db postgres --db-url rank0 across nodes: on a 2-node local cluster
# (lib.sh) settle.sbatch runs two ranks on each node under --io sleep, and the
# test checks that the job completed (so every rank's check of the database
# after each run passed), that its statuses equal a --db none run's, that its
# ranks ran on both nodes, and that every rank's database counted the
# connections of all four ranks (db_backends): the ranks of the other node used
# rank 0's server, not one of their own. Then that the server is gone, process
# and folder. Exit 0 pass, 1 fail, 77 skip (only when slurmd cannot run here).
set -euo pipefail

if (($# != 4)); then
    echo "usage: $0 LOOMDIST SOURCE_DIR WORK_DIR PYTHON" >&2
    exit 2
fi
BIN=$(realpath -- "$1")
SRC=$(realpath -- "$2")
WORK=$(realpath -m -- "$3")
PY=$4
readonly BIN SRC WORK PY
readonly CLUSTER=$SRC/slurm/local-cluster
readonly SETTLE=$SRC/slurm/settle.sbatch
readonly SAME=$SRC/tests/settle/check_http_io.py
readonly SHARED=$SRC/tests/db/check_shared.py
readonly STATE=$WORK/cluster
readonly NODES=2 PER_NODE=2
# A stock of 10 connections per rank: threads' pool (--db-conns 10, under
# --os-threads 16) over --carriers 2 x 1 pipe.
readonly STOCK=10
readonly LD_ARGS=(--quiet --jobs settle --trades 240 --fail-rate 0.2 --latency-scale 0.01
    --os-threads "$STOCK" --carriers 2 --io sleep)
PORTS=""
FAILURES=0
# shellcheck source=tests/slurm/lib.sh
source "$SRC/tests/slurm/lib.sh"
# shellcheck source=tests/lib/tmp.sh
source "$SRC/tests/lib/tmp.sh"

# No private server of the job's left: no process naming its folder, nothing in
# it (the watcher stops it when rank 0 ends; 15 s at most).
server_gone() {
    local i
    for ((i = 0; i < 150; i++)); do
        if ! pgrep -f "$TMPDIR/loomdist-pg" >/dev/null &&
            [[ -z $(find "$TMPDIR" -mindepth 1 -maxdepth 1) ]]; then
            passed "rank 0's server and its folder are gone"
            return
        fi
        sleep 0.1
    done
    failed "rank 0's server outlived the job: $(pgrep -af "$TMPDIR/loomdist-pg" || ls "$TMPDIR")"
}

# The job on both nodes, against a --db none run of one rank here.
test_rank0() {
    local rc=0
    mpirun -n 1 "$BIN" "${LD_ARGS[@]}" --output "$WORK/sleep.h5" >"$WORK/sleep.out" 2>&1 ||
        { failed "the --db none run: $(cat "$WORK/sleep.out")"; return; }
    (cd "$WORK" && sbatch --wait --quiet -N "$NODES" --ntasks-per-node="$PER_NODE" -J db-rank0 \
        -o "$WORK/db-rank0.out" "$SETTLE" -- "${LD_ARGS[@]}" --db postgres --db-url rank0 \
        --output "$WORK/rank0.h5") || rc=$?
    if [[ $rc != 0 ]]; then
        failed "the --db-url rank0 job returned $rc:"
        sed 's/^/    /' "$WORK/db-rank0.out"
        return
    fi
    passed "the --db-url rank0 job completed: every rank's database check passed"
    if "$PY" "$SAME" same "$WORK/sleep.h5" "$WORK/rank0.h5"; then
        passed "its statuses equal --db none's"
    else
        failed "its statuses differ from --db none's"
    fi
    if "$PY" "$SHARED" "$WORK/rank0.h5" "$NODES" "$STOCK"; then
        passed "the ranks of both nodes used rank 0's server"
    else
        failed "the ranks did not all use rank 0's server"
    fi
    server_gone
}

main() {
    local start=$SECONDS
    require_slurm
    [[ -x $BIN ]] || { echo "FAIL: loomdist binary $BIN is not executable"; exit 1; }
    reap_leftovers
    # rank 0's server, as postgres, in a folder it can reach (tests/lib/tmp.sh).
    TMPDIR=$(reaped_tmp "$WORK.tmp") || exit 1
    export TMPDIR
    rm -rf -- "$WORK"
    mkdir -p -- "$WORK"
    # shellcheck disable=SC2154 # rc: set in the trap itself
    trap 'rc=$?; rm -rf -- "$TMPDIR" "$WORK.tmp"; (exit "$rc"); cleanup' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    pick_ports
    start_cluster
    test_rank0
    echo "slurm db test: $FAILURES failed checks, $((SECONDS - start)) s"
    ((FAILURES == 0))
}

main "$@"
