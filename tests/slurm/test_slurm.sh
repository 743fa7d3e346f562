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

# Report a skip with its reason and stop; CTest maps 77 to "skipped".
skip() {
    echo "SKIP: $*"
    exit 77
}

# Record a failed check but go on, so one run shows every problem.
failed() {
    echo "FAIL: $*"
    FAILURES=$((FAILURES + 1))
}

# A passed check, printed so the log shows what was verified.
passed() {
    echo "ok: $*"
}

# Skip only when this host cannot run slurmd at all: no Slurm or munge, not
# root, or slurmd unable even to inspect the host.
require_slurm() {
    local tool
    for tool in slurmd slurmctld munged mungekey sbatch srun sinfo scontrol sacct setsid; do
        command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (needs slurm-wlm and munge)"
    done
    [[ $EUID -eq 0 ]] || skip "slurmd must run as root to launch jobs, and this test is not root"
    slurmd -C >/dev/null 2>&1 || skip "slurmd cannot run on this host ('slurmd -C' fails)"
}

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

# Runs on every exit: stop the cluster, then prove no daemon or job step of
# it is left, and show the daemon logs when something failed.
cleanup() {
    local rc=$? left runtime=""
    trap - EXIT
    if [[ -d $STATE ]]; then
        [[ -s $STATE/runtime-dir ]] && runtime=$(<"$STATE/runtime-dir")
        "$CLUSTER" --state "$STATE" stop || true
        if [[ -n $runtime && -e $runtime ]]; then
            echo "FAIL: stop left the cluster's runtime folder $runtime"
            rc=1
        elif [[ -n $runtime ]]; then
            echo "ok: stop removed the runtime folder $runtime"
        fi
        left=$(leftover_pids)
        if [[ -n $left ]]; then
            echo "FAIL: processes of the test cluster still run after stop:"
            ps -o pid,args -p "$left" || true
            rc=1
        else
            echo "ok: no munged, slurmctld, slurmd or slurmstepd of the test cluster left"
        fi
        if ((rc != 0 && rc != 77)); then show_logs; fi
    fi
    exit "$rc"
}

# Pids (comma-separated) of processes belonging to the test cluster: the
# daemons name the state folder on their command line; job steps carry it in
# their environment (SLURM_CONF).
leftover_pids() {
    local pids p
    pids=$(pgrep -f -- "$STATE/" || true)
    for p in $(pgrep -x slurmstepd || true); do
        if grep -qs -- "$STATE/" "/proc/$p/environ"; then pids+=" $p"; fi
    done
    echo "$pids" | xargs | tr ' ' ','
}

# The end of each daemon log, for diagnosing a failed run.
show_logs() {
    local f
    for f in "$STATE"/log/slurmctld.log "$STATE"/log/slurmd-node*.log; do
        [[ -f $f ]] || continue
        echo "---- last lines of ${f#"$WORK"/}"
        tail -n 15 "$f"
    done
}

# Ports away from both Slurm's defaults and local-cluster's, so a cluster
# someone started by hand does not collide with the test's; and free ones, since
# another copy of this test (another build folder, a chroot sharing this host's
# network) may hold the first choice: slurmctld and each slurmd must bind theirs.
pick_ports() {
    if [[ -n ${LOOMDIST_SLURM_TEST_PORTS:-} ]]; then
        PORTS=$LOOMDIST_SLURM_TEST_PORTS
        return
    fi
    PORTS=$("$PY" - "$NODES" <<'EOF'
import socket, sys
nodes = int(sys.argv[1])
def free(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("", port))
        return True
    except OSError:
        return False
    finally:
        s.close()
for base in range(16827, 17800, 10):
    if all(free(p) for p in range(base, base + nodes + 1)):
        print(f"{base},{base + 1}")
        break
EOF
    )
    [[ -n $PORTS ]] || { echo "FAIL: no free ports for the test cluster"; exit 1; }
}

# Start the emulated cluster and point this shell at it. Slurm variables from
# an enclosing allocation (the test itself may run in a job) must not leak in.
start_cluster() {
    local v
    for v in $(compgen -v | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_' || true); do unset "$v"; done
    "$CLUSTER" --state "$STATE" --ports "$PORTS" start "$NODES" ||
        { failed "the local cluster did not start"; exit 1; }
    eval "$("$CLUSTER" --state "$STATE" env)"
    export LOOMDIST_BIN=$BIN
    check_runtime_dir
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
    rm -rf -- "$WORK"
    mkdir -p -- "$WORK" "$PRIVATE"
    chmod 0700 "$PRIVATE"
    trap cleanup EXIT
    # A signal (Ctrl-C, a test driver's TERM) must still run cleanup.
    trap 'exit 130' INT
    trap 'exit 143' TERM
    pick_ports
    start_cluster
    test_scaling_jobs
    test_sweep
    test_bad_input
    echo "slurm test: $FAILURES failed checks, $((SECONDS - start)) s"
    ((FAILURES == 0))
}

main "$@"
