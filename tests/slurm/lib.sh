# shellcheck shell=bash
# lib.sh: the emulated cluster the Slurm tests run on (slurm/local-cluster),
# sourced by each of them: skip, record checks, start it on free ports, stop it on
# exit and prove nothing of it is left.
#
# The sourcing script sets BIN (loomdist), CLUSTER (slurm/local-cluster), STATE (the
# cluster's state folder), WORK (the test's folder), NODES, PY (a python3) and
# FAILURES=0, then calls require_slurm, pick_ports and start_cluster, with
# `trap cleanup EXIT` set before the start.

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

# A cluster that an earlier run of this test left behind (killed at CTest's timeout,
# where no EXIT trap runs) is stopped by the pids its state folder recorded, before
# the folder goes: never by killing daemons by name, which may be another test's.
reap_leftovers() {
    [[ -d $STATE ]] || return 0
    "$CLUSTER" --state "$STATE" stop >/dev/null 2>&1 || true
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
