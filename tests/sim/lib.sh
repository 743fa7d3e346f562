# shellcheck shell=bash
# lib.sh, sourced by the SimGrid tests: skip (77) unless the skeleton was built and
# smpirun is on PATH; calibrate the local platform on this machine.
# require_smpi SKELETON
require_smpi() {
    if [ -z "$1" ] || [ ! -x "$1" ] || ! command -v smpirun > /dev/null; then
        echo "SimGrid's SMPI is absent (apt-get install libsimgrid-dev): skipped"
        exit 77
    fi
}

# calibrate_local PINGPONG PYTHON WORKDIR: three runs of loomdist-pingpong under
# mpirun (WORKDIR/pp1.txt ...), and sim/platforms/local.xml calibrated on them into
# WORKDIR/local.xml by predict.py platform.
calibrate_local() {
    local pingpong=$1 py=$2 work=$3 rep top
    top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    for rep in 1 2 3; do
        mpirun -n 2 "$pingpong" > "$work/pp$rep.txt"
    done
    "$py" "$top/sim/predict.py" platform --template "$top/sim/platforms/local.xml" \
        "$work"/pp?.txt > "$work/local.xml"
}

# coarse_makespans CSV: every makespan in predict.py validate's CSV within 50% of its
# measure, whatever LD_SIM_STRICT says, for each rank count the machine's CPUs hold (one
# rank a node under Slurm). The 10% and 25% bounds are for a quiet machine; a shared one
# has moved the makespan by 15% at most
# (results/2026-12-03-amd-epyc-sim-validation.md), while a skeleton or calibration that
# is wrong misses by far more. More ranks than CPUs take turns on them with whatever
# else runs, which a calibration made on the machine cannot foresee: with two busy loops
# beside the suite (scripts/soak), 3 and 4 ranks on 2 CPUs measured 1.9-2.6x their
# prediction while 1 and 2 ranks held within 26%. Those rows are said, and bounded only
# by LD_SIM_STRICT's. Prints each miss; status 1 if any, or if no row was bounded.
coarse_makespans() {
    awk -F, -v cpus="$(nproc)" 'NR > 1 && $6 == "makespan" {
            if ($4 + 0 > cpus + 0) {
                printf "makespan at %s %s: more ranks than the %s CPUs, not bounded here\n", $4, $3, cpus
                next
            }
            e = $9 < 0 ? -$9 : $9
            if (e > 0.5) { printf "makespan at %s %s off by %+.1f%%\n", $4, $3, $9 * 100; bad = 1 }
            n++
        }
        END { if (!n) print "no makespan the CPUs hold in the validation"; exit (bad || !n) }' "$1"
}
