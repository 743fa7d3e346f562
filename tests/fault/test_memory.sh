#!/usr/bin/env bash
# Not enough memory for the stacks, found before any work starts: under ulimit -v, a
# run whose stacks of their own (--stack-mode own) cannot fit in the address space;
# and a book of so many trades that the node's memory cannot hold a green thread for
# each, even in copy mode's chunks.
# Usage: test_memory.sh LOOMDIST WORKDIR [sanitized]
# A sanitized build maps terabytes of shadow memory, so it skips the ulimit -v case.
set -euo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
sanitized=${3:-}
# shellcheck source=lib.sh
source "$here/lib.sh"
fresh "$2"
work=$(pwd)

# 4 GB of address space, and 100,000 stacks of 64 KiB per rank: 6.5 GiB each.
if [ -z "$sanitized" ]; then
    ranks_to_files "$work/ulimit.rank"
    launch ulimit bash -c 'ulimit -v 4000000 && exec "$@"' limited mpirun -n 2 \
        "${per_rank[@]}" "$bin" --trades 200000 --stack-mode own --output "$work/ulimit.h5"
    run_ranks=2
    finish_run
    [ "$run_rc" -eq 2 ] || fail "stacks past ulimit -v exited $run_rc, not 2"
    expect_said 0 '^loomdist: rank 0 needs 6.5 GiB of address space for 100000 green-thread stacks of 64 KiB, but ulimit -v leaves it [0-9.]+ [MG]iB: use more ranks or fewer --trades, a smaller --stack-size or --stack-mode copy$'
    did_no_work
    nothing_under "$work/ulimit.h5"
    verdict
fi

# More trades than the node has memory for, at three trades a KiB: settle's estimate
# is a 192-byte chunk and 224 bytes of state each, 416 bytes, so three ask for 1.2 KiB
# (two, 0.8 KiB, would fit within the 90% of MemAvailable a run may take).
avail_kib=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
trades=$((avail_kib * 3))
if [ "$trades" -le 100000000 ]; then
    # The refusal comes with the checks, before rank 0 builds the book, so it takes no
    # longer than a run's start: bad input, one line, exit 2.
    launch_ranked trades 1 "$bin" --jobs settle --strategies green \
        --trades "$trades" --output "$work/trades.h5"
    finish_run
    [ "$run_rc" -eq 2 ] || fail "$trades trades on one rank exited $run_rc, not 2"
    expect_said 0 "^loomdist: --trades $trades needs about [0-9.]+ GiB of memory per node"
    did_no_work
    nothing_under "$work/trades.h5"
    verdict
else
    echo "note: this node has memory for 100,000,000 trades; the --trades case is skipped"
fi

finish "memory: stacks past ulimit -v and trades past the node's memory are refused before any work"
