#!/bin/sh
# analysis.report LOOMDIST ROOT WORK: run loomdist at 1, 2 and 4 ranks at small scale,
# add a truncated copy of one run and a file that is not HDF5, make the report from the
# folder, and let check_report.py compare it with the HDF5 files.
set -eu
loomdist=$1
root=$2
work=$3
# Open MPI refuses root without these, and 4 ranks on a 2-core machine oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
rm -rf "$work"
mkdir -p "$work/runs"
for ranks in 1 2 4; do
    if ! mpirun -n "$ranks" "$loomdist" --trades 400 --latency-scale 0.02 --sims 2000 \
            --iterations 5 --quiet --output "$work/runs/ranks$ranks.h5" \
            >"$work/loomdist-$ranks.log" 2>&1; then
        echo "loomdist failed at $ranks ranks:" >&2
        cat "$work/loomdist-$ranks.log" >&2
        exit 1
    fi
done
head -c 4096 "$work/runs/ranks4.h5" >"$work/runs/truncated.h5"
printf 'a note, not an HDF5 file\n' >"$work/runs/notes.h5"
if ! "$root/analysis/loomdist-report" "$work/runs" -o "$work/report" 2>"$work/report.stderr"; then
    echo "loomdist-report failed:" >&2
    cat "$work/report.stderr" >&2
    exit 1
fi
exec "$root/tests/analysis/run_python.sh" "$root" "$root/tests/analysis/check_report.py" \
    --runs "$work/runs" --report "$work/report" --stderr "$work/report.stderr" \
    --bad truncated.h5 --bad notes.h5
