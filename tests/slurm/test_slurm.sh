#!/usr/bin/env bash
# test_slurm.sh LOOMDIST SOURCE_DIR WORK_DIR
#
# End-to-end test of slurm/: starts a 3-node local cluster whose state folder
# sits below a folder of mode 0700 (as a clone in /root does), runs settle.sbatch
# on 1 and on 3 nodes, runs a sweep, checks every HDF5 file against what Slurm
# says about its job, checks that bad input fails the job, and stops the
# cluster again whatever happened. Exit 0 pass, 1 fail, 77 skip (only when
# slurmd cannot run here at all).
set -euo pipefail

if (($# != 3)); then
    echo "usage: $0 LOOMDIST SOURCE_DIR WORK_DIR" >&2
    exit 2
fi
BIN=$(realpath -- "$1")
SRC=$(realpath -- "$2")
WORK=$(realpath -m -- "$3")
readonly BIN SRC WORK
readonly CLUSTER=$SRC/slurm/local-cluster
readonly SETTLE=$SRC/slurm/settle.sbatch
readonly SWEEP=$SRC/slurm/sweep
readonly CHECK=$SRC/tests/slurm/check_h5.py
# shellcheck source=tests/slurm/lib.sh
source "$SRC/tests/slurm/lib.sh"
# munged refuses a socket below a folder others cannot search; local-cluster
# must put it elsewhere, wherever its state folder is.
readonly PRIVATE=$WORK/private
readonly STATE=$PRIVATE/cluster
readonly NODES=3
# CTLD,NODE1 ports: LOOMDIST_SLURM_TEST_PORTS, else free ones (pick_ports).
PORTS=""
readonly TRADES=600
readonly LD_ARGS=(--latency-scale 0.02 --trades "$TRADES" --sims 2000)
FAILURES=0
PY=""

# The checks read HDF5 with h5py; pick an interpreter that can import it
# rather than assume the first python3 on PATH can.
find_python() {
    local py
    for py in /usr/bin/python3 python3; do
        if "$py" -c 'import h5py' >/dev/null 2>&1; then
            PY=$py
            return 0
        fi
    done
    echo "FAIL: no python3 here imports h5py (install python3-h5py)"
    exit 1
}

# The munge socket must be outside the 0700 folder, in a folder of its own
# that all users can search, recorded in the state folder.
check_runtime_dir() {
    local runtime socket
    runtime=$(cat "$STATE/runtime-dir" 2>/dev/null || true)
    socket=$(sed -n 's/^AuthInfo=socket=//p' "$STATE/slurm.conf")
    if [[ -z $runtime || ! -d $runtime ]]; then
        failed "no runtime folder recorded in $STATE/runtime-dir"
    elif [[ $socket != "$runtime"/* || ! -S $socket ]]; then
        failed "munge socket '$socket' is not a socket in the runtime folder $runtime"
    elif [[ $(stat -c %a "$PRIVATE") != 700 ]]; then
        failed "the state folder's parent $PRIVATE is not mode 0700"
    else
        passed "state below a 0700 folder; munge socket in $runtime ($(stat -c %a "$runtime"))"
    fi
}

# Run settle.sbatch with sbatch --wait; the job's output goes to NAME.out.
# Prints sbatch's exit status (the job's).
run_job() {
    local name=$1 nodes=$2
    shift 2
    local rc=0
    (cd "$WORK" && sbatch --wait --quiet -N "$nodes" -J "$name" -o "$WORK/$name.out" "$SETTLE" "$@") || rc=$?
    echo "$rc"
}

# A "key=value" field that settle.sbatch printed into a job's output.
job_field() {
    sed -n "s/^settle.sbatch: .*\\b$2=\\([^ ]*\\).*/\\1/p" "$1" | head -n 1
}

# The job id settle.sbatch reported ("job ID name ...").
job_id_of() {
    sed -n 's/^settle.sbatch: job \([0-9][0-9]*\) name .*/\1/p' "$1" | head -n 1
}

# Slurm's own record of a finished job, from the completion log: STATE|NODELIST.
slurm_record() {
    sacct -c -j "$1" -n -P -o state,nodelist 2>/dev/null | head -n 1
}

# Comma-separated node names of a Slurm node list expression.
expand_nodes() {
    scontrol show hostnames "$1" | paste -sd, -
}

# Check a successful job: exit 0, COMPLETED, a file that holds every trade
# once, the node count, and node names that are the job's Slurm nodes.
check_good_job() {
    local name=$1 nodes=$2 rc=$3 out=$WORK/$1.out
    local id file record names recorded
    if [[ $rc != 0 ]]; then
        failed "$name: sbatch --wait returned $rc"
        sed 's/^/    /' "$out" 2>/dev/null || true
        return
    fi
    id=$(job_id_of "$out")
    file=$(sed -n 's/^settle.sbatch: wrote \(.*\) ([0-9]* bytes)$/\1/p' "$out")
    record=$(slurm_record "$id")
    [[ ${record%%|*} == COMPLETED ]] || failed "$name: job $id is '${record%%|*}' in sacct -c, expected COMPLETED"
    names=$(expand_nodes "${record#*|}")
    recorded=$(job_field "$out" hostnames)
    [[ $names == "$recorded" ]] || failed "$name: job saw nodes '$recorded', Slurm says '$names'"
    [[ $file == */*-"$nodes"n*t-"$id".h5 ]] || failed "$name: file name '$file' lacks the node count or job id"
    if [[ -z $file || ! -s $file ]]; then
        failed "$name: no HDF5 file reported in $out"
        return
    fi
    if "$PY" "$CHECK" "$file" --trades "$TRADES" --nodes "$nodes" \
        --ranks "$(job_field "$out" ranks)" --node-names "$names" --job-id "$id"; then
        passed "$name: job $id on $names, $(job_field "$out" wall_s) s in loomdist"
    else
        failed "$name: $file does not match its job"
    fi
}

# Check a job that must fail: non-zero exit, FAILED in Slurm, the expected
# clear line in its output, and no HDF5 file left behind.
check_bad_job() {
    local name=$1 rc=$2 pattern=$3 out=$WORK/$1.out id record
    id=$(sed -n 's/^Submitted batch job //p; s/^\([0-9][0-9]*\)$/\1/p' "$WORK/$name.id" 2>/dev/null | head -n 1)
    record=$(slurm_record "$id")
    if [[ $rc == 0 ]]; then
        failed "$name: the job succeeded, but it must fail"
    elif [[ ${record%%|*} != FAILED ]]; then
        failed "$name: job $id is '${record%%|*}' in sacct -c, expected FAILED"
    elif ! grep -q -- "$pattern" "$out"; then
        failed "$name: no line matching '$pattern' in its output:"
        sed 's/^/    /' "$out"
    elif compgen -G "$WORK/results/*-$id.h5" >/dev/null; then
        failed "$name: a failed job left an HDF5 file"
    else
        passed "$name: job $id FAILED (exit $rc): $(grep -m1 -- "$pattern" "$out")"
    fi
}

# 1 node, then all 3 nodes, one after the other so the times are comparable.
test_scaling_jobs() {
    local rc
    rc=$(run_job one-node 1 -- "${LD_ARGS[@]}")
    check_good_job one-node 1 "$rc"
    rc=$(run_job three-nodes "$NODES" -- "${LD_ARGS[@]}")
    check_good_job three-nodes "$NODES" "$rc"
}

# The sweep must submit one job per node count and leave one file for each.
test_sweep() {
    local rc=0 n file count id names
    (cd "$WORK" && "$SWEEP" --nodes 1,2 --results "$WORK/sweep" --wait -- "${LD_ARGS[@]}") || rc=$?
    if [[ $rc != 0 ]]; then
        failed "sweep --wait returned $rc"
        return
    fi
    for n in 1 2; do
        count=$(compgen -G "$WORK/sweep/*-${n}n*t-*.h5" | wc -l)
        if [[ $count != 1 ]]; then
            failed "sweep: $count files for $n nodes, expected 1"
            continue
        fi
        file=$(compgen -G "$WORK/sweep/*-${n}n*t-*.h5")
        id=${file##*-}
        id=${id%.h5}
        names=$(expand_nodes "$(slurm_record "$id" | cut -d'|' -f2)")
        if "$PY" "$CHECK" "$file" --trades "$TRADES" --nodes "$n" --node-names "$names" --job-id "$id"; then
            passed "sweep: $n nodes -> ${file#"$WORK"/}"
        else
            failed "sweep: $file does not match its job"
        fi
    done
}

# Bad input must fail the job, never "succeed" without data. The four jobs
# are independent, so they run side by side.
test_bad_input() {
    local -A pids=()
    local name rc
    : >"$WORK/not-a-folder"
    (cd "$WORK" && LOOMDIST_BIN=$WORK/no-such-loomdist \
        sbatch --wait -N 1 -J missing-binary -o "$WORK/missing-binary.out" "$SETTLE" \
        >"$WORK/missing-binary.id") &
    pids[missing-binary]=$!
    (cd "$WORK" && sbatch --wait -N 1 -J bad-option -o "$WORK/bad-option.out" "$SETTLE" \
        -- "${LD_ARGS[@]}" --no-such-option >"$WORK/bad-option.id") &
    pids[bad-option]=$!
    (cd "$WORK" && LOOMDIST_RESULTS=$WORK/not-a-folder/results \
        sbatch --wait -N 1 -J unwritable-results -o "$WORK/unwritable-results.out" "$SETTLE" \
        -- "${LD_ARGS[@]}" >"$WORK/unwritable-results.id") &
    pids[unwritable-results]=$!
    (cd "$WORK" && sbatch --wait -N 1 -J unwritable-output -o "$WORK/unwritable-output.out" "$SETTLE" \
        -- "${LD_ARGS[@]}" --output "$WORK/not-a-folder/run.h5" >"$WORK/unwritable-output.id") &
    pids[unwritable-output]=$!
    for name in missing-binary bad-option unwritable-results unwritable-output; do
        rc=0
        wait "${pids[$name]}" || rc=$?
        case $name in
            missing-binary) check_bad_job "$name" "$rc" "settle.sbatch: error: loomdist binary not found" ;;
            bad-option) check_bad_job "$name" "$rc" "settle.sbatch: error: loomdist failed with exit status 2" ;;
            *) check_bad_job "$name" "$rc" "settle.sbatch: error: .*output folder" ;;
        esac
    done
    # loomdist's own message for the bad option, shown for the log's reader.
    grep -v '^settle.sbatch:\|^srun:' "$WORK/bad-option.out" | sed 's/^/    loomdist said: /' || true
}

main() {
    local start=$SECONDS
    require_slurm
    [[ -x $BIN ]] || { echo "FAIL: loomdist binary $BIN is not executable"; exit 1; }
    find_python
    reap_leftovers
    rm -rf -- "$WORK"
    mkdir -p -- "$WORK" "$PRIVATE"
    chmod 0700 "$PRIVATE"
    trap cleanup EXIT
    # A signal (Ctrl-C, a test driver's TERM) must still run cleanup.
    trap 'exit 130' INT
    trap 'exit 143' TERM
    pick_ports
    start_cluster
    check_runtime_dir
    test_scaling_jobs
    test_sweep
    test_bad_input
    echo "slurm test: $FAILURES failed checks, $((SECONDS - start)) s"
    ((FAILURES == 0))
}

main "$@"
