#!/usr/bin/env bash
# No job-specific code in the driver: driver/ names no job and none of a job's fields.
# The job names are read from the registry, so a new job is covered the day it lands.
# Usage: test_driver_generic.sh DRIVER_DIR REGISTRY_C
set -euo pipefail
driver=$1 registry=$2
# ld_jobs[] = {&ld_settle_job, &ld_var_job, ...}: the names between ld_ and _job.
names=$(grep -o '&ld_[a-z_]*_job' "$registry" | sed 's/&ld_\(.*\)_job/\1/' | sort -u)
[ -n "$names" ] || { echo "no job names found in $registry" >&2; exit 1; }
pattern="LD_FIELDS|ld_trade_result"
for n in $names; do
    pattern="$pattern|\\b$n\\b|\"$n\"|ld_${n}_"
done
if grep -nE "$pattern" "$driver"/*.c "$driver"/*.h; then
    echo "FAIL: driver/ names a job or a job's fields (above); jobs must describe themselves" >&2
    exit 1
fi
echo "driver generic: driver/ names none of the jobs: $(echo $names)"
