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
