#!/usr/bin/env bash
# A job added from a fixture folder (tests/fixtures/toy_job) with its one registry
# entry, through the job contract alone: the toy runs tasks of its own and no trades.
# Under mpirun -n 2 with a single trade (so no rank count is refused for want of
# trades) every rank runs --toy-tasks tasks in both strategies; the table names them,
# and the file holds the toy's option and, per strategy, iteration and rank, its
# figures: the tasks and their sum. Figures are taken by name: with rank 1 reporting
# them in the other order (an MPMD launch, --toy-figures) the table and the file are the
# same, and with rank 1 leaving one out the run fails, saying which. Under ulimit -v,
# too many tasks are refused before any work, naming --toy-tasks.
# Usage: test_toy_job.sh LOOMDIST_TOY PYTHON WORKDIR [sanitized]
set -uo pipefail
bin=$(realpath "$1") py=$2 work=$3 sanitized=${4:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

args=(--jobs toy --toy-tasks 1000 --trades 1 --iterations 2 --quiet)

# The toy's table rows, its figures table (each figure's mean over iterations and
# ranks) and its file, from a run that wrote stdout.txt and toy.h5.
check_run() {
    for s in loop green; do
        grep -q "^$s " stdout.txt || fail "$1: no table row for toy/$s"
        grep -qE "^$s +tasks +1000 " stdout.txt || fail "$1: toy/$s's tasks are not 1000"
        grep -qE "^$s +sum +4.995e\+05 " stdout.txt || fail "$1: toy/$s's sum is not 499500"
    done
    "$py" - toy.h5 << 'PY' || fail "$1: the toy's HDF5 (above)"
import sys

import h5py
import numpy as np

bad = []
with h5py.File(sys.argv[1], "r") as f:
    if f.attrs.get("toy_tasks") != 1000:
        bad.append(f"root attribute toy_tasks is {f.attrs.get('toy_tasks')}, not 1000")
    for s in ("loop", "green"):
        for name, want in (("tasks", 1000), ("sum", 1000 * 999 // 2)):
            path = f"toy/{s}/{name}"
            if path not in f:
                bad.append(f"no {path}")
                continue
            got = f[path][...]
            if got.shape != (2, 2) or not np.all(got == want):
                bad.append(f"{path} is {got.tolist()}, not {want} for 2 iterations x 2 ranks")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
}

timeout 120 mpirun -n 2 "$bin" "${args[@]}" --output toy.h5 > stdout.txt 2> stderr.txt
rc=$?
[ "$rc" = 0 ] || { fail "the toy's run exited $rc"; sed 's/^/    /' stderr.txt; }
check_run "in order"

rm -f toy.h5
timeout 120 mpirun -n 1 "$bin" "${args[@]}" --output toy.h5 : \
    -n 1 "$bin" "${args[@]}" --output toy.h5 --toy-figures reversed > stdout.txt 2> stderr.txt
rc=$?
[ "$rc" = 0 ] || { fail "the run with rank 1's figures reversed exited $rc"; sed 's/^/    /' stderr.txt; }
check_run "rank 1 reversed"

timeout 120 mpirun -n 1 "$bin" "${args[@]}" --output gap.h5 : \
    -n 1 "$bin" "${args[@]}" --output gap.h5 --toy-figures no-sum > gap.out 2> gap.err
rc=$?
[ "$rc" = 1 ] || fail "the run with rank 1's sum left out exited $rc, not 1"
grep -qxF "loomdist: toy/loop reported figures unlike rank 0's first iteration on 1 of 2 ranks (rank 1: measured iteration 1: no figure sum)" gap.err ||
    { fail "no line naming rank 1's missing figure"; sed 's/^/    /' gap.err; }
[ ! -e gap.h5 ] || fail "the failed run left gap.h5"

# More tasks than the address space ulimit -v leaves, named by the toy's own option.
# A sanitized build maps terabytes of shadow memory: skipped there.
if [ -z "$sanitized" ]; then
    (
        ulimit -S -v 1500000
        timeout 60 mpirun -n 2 "$bin" --jobs toy --toy-tasks 10000000 --strategies green \
            --stack-mode copy --output big.h5 > big.out 2> big.err
    )
    rc=$?
    [ "$rc" = 2 ] || fail "--toy-tasks 10000000 under ulimit -v exited $rc, not 2"
    grep -qE '^loomdist: rank 0 needs 1.8 GiB of address space for 10000000 green-thread chunks of 192 bytes, but ulimit -v leaves it [0-9.]+ [MG]iB: use fewer --toy-tasks$' big.err ||
        { fail "no refusal naming --toy-tasks"; sed 's/^/    /' big.err; }
    [ ! -e big.h5 ] || fail "the refused run left big.h5"
fi

[ "$fails" = 0 ] && echo "toy job: a job from the contract alone runs on 2 ranks with 1 trade"
exit "$((fails > 0))"
