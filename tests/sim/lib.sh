# shellcheck shell=bash
# lib.sh, sourced by the SimGrid tests: skip (77) unless the skeleton was built and
# smpirun is on PATH.
# require_smpi SKELETON
require_smpi() {
    if [ -z "$1" ] || [ ! -x "$1" ] || ! command -v smpirun > /dev/null; then
        echo "SimGrid's SMPI is absent (apt-get install libsimgrid-dev): skipped"
        exit 77
    fi
}
