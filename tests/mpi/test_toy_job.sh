#!/usr/bin/env bash
# A job added from a fixture folder (tests/fixtures/toy_job) with its one registry
# entry, through the job contract alone: the toy runs tasks of its own and no trades.
# Under mpirun -n 2 with a single trade (so no rank count is refused for want of
# trades) every rank runs --toy-tasks tasks in both strategies; the table names them,
# and the file holds the toy's option and, per strategy, iteration and rank, its
# figures: the tasks and their sum. Under ulimit -v, too many tasks are refused before
# any work, naming --toy-tasks.
# Usage: test_toy_job.sh LOOMDIST_TOY PYTHON WORKDIR [sanitized]
set -uo pipefail
bin=$(realpath "$1") py=$2 work=$3 sanitized=${4:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

timeout 120 mpirun -n 2 "$bin" --jobs toy --toy-tasks 1000 --trades 1 --iterations 2 \
    --quiet --output toy.h5 > stdout.txt 2> stderr.txt
rc=$?
[ "$rc" = 0 ] || { fail "the toy's run exited $rc"; sed 's/^/    /' stderr.txt; }
for s in loop green; do
    grep -q "^$s " stdout.txt || fail "no table row for toy/$s"
done
"$py" - toy.h5 << 'PY' || fail "the toy's HDF5 (above)"
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

# More tasks than the address space ulimit -v leaves, named by the toy's own option.
# A sanitized build maps terabytes of shadow memory: skipped there.
if [ -z "$sanitized" ]; then
    (
        ulimit -S -v 4000000
        timeout 60 mpirun -n 2 "$bin" --jobs toy --toy-tasks 10000000 --strategies green \
            --stack-mode copy --output big.h5 > big.out 2> big.err
    )
    rc=$?
    [ "$rc" = 2 ] || fail "--toy-tasks 10000000 under ulimit -v exited $rc, not 2"
    grep -qE '^loomdist: rank 0 needs 4.8 GiB of address space for 10000000 green-thread chunks of 512 bytes, but ulimit -v leaves it [0-9.]+ [MG]iB: use fewer --toy-tasks$' big.err ||
        { fail "no refusal naming --toy-tasks"; sed 's/^/    /' big.err; }
    [ ! -e big.h5 ] || fail "the refused run left big.h5"
fi

[ "$fails" = 0 ] && echo "toy job: a job from the contract alone runs on 2 ranks with 1 trade"
exit "$((fails > 0))"
