#!/usr/bin/env bash
# Bad input, as a user mistypes it, under one rank and under mpirun -n 4: exit status 2,
# the message exactly once, nothing on stdout, no output file, no rank left hanging.
# Usage: test_bad_input.sh LOOMDIST WORKDIR [sanitized]
# A sanitized build maps terabytes of shadow memory, so it skips the ulimit -v case.
set -uo pipefail
bin=$(realpath "$1") work=$2 sanitized=${3:-}
# shellcheck source=../lib/ranks.sh
source "$(cd "$(dirname "$0")" && pwd)/../lib/ranks.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
touch a-file
mkdir a-folder
fails=0

# expect RANKS MESSAGE ARGS...: run (RANKS 0: without mpirun), then check status,
# leftovers and the message: exactly once, and under mpirun from rank 0 alone, each
# rank's stderr in a file of its own (ranks.sh).
expect() {
    local ranks=$1 message=$2 said
    shift 2
    local launch=()
    ranks_to_files "$PWD/rank"
    [ "$ranks" -gt 0 ] && launch=(mpirun -n "$ranks" "${per_rank[@]}")
    rm -f out.h5 out.h5.tmp
    timeout 60 "${launch[@]}" "$bin" --output out.h5 "$@" > stdout.txt 2> stderr.txt
    local rc=$?
    if [ "$ranks" -gt 0 ]; then
        said=$(said_once -F "$PWD/rank" "$ranks" 0 "loomdist: $message")
        ranks_said "$PWD/rank" "$ranks" >> stderr.txt
    elif [ "$(grep -cF -- "loomdist: $message" stderr.txt)" != 1 ]; then
        said="the message is not there once"
    else
        said=
    fi
    if [ "$rc" != 2 ] || [ -n "$said" ] || [ -s stdout.txt ] || [ -e out.h5 ] ||
        [ -e out.h5.tmp ]; then
        echo "FAIL (ranks=$ranks, $*): status $rc, ${said:-the message once}," \
            "stdout $(wc -c < stdout.txt) bytes; stderr:"
        sed 's/^/    /' stderr.txt
        fails=$((fails + 1))
    fi
}

for ranks in 0 4; do
    expect "$ranks" "unknown option '--tardes' (try --help)" --tardes 10
    expect "$ranks" "--trades must be at least 1, not 0" --trades 0
    expect "$ranks" "--trades takes a whole number, not '-3'" --trades -3
    expect "$ranks" "--sims takes a whole number, not 'many'" --sims many
    expect "$ranks" "--trades 1000000000000 is too large: at most 100000000" \
        --trades 1000000000000
    expect "$ranks" "--stack-size 1048576 is too large: at most 65536" --stack-size 1048576
    # A newline typed into a value comes back as '?', so the message stays one line.
    expect "$ranks" "--trades takes a whole number, not '1?2'" --trades $'1\n2'
done
# Outputs that cannot be written: no such folder, a file as folder, a folder as file.
expect 4 "cannot write --output no-such-dir/x.h5: No such file or directory" \
    --output no-such-dir/x.h5
expect 0 "cannot write --output a-file/x.h5: Not a directory" --output a-file/x.h5
expect 4 "--output a-folder is a folder; give a file name" --output a-folder
expect 3 "3 ranks but only 2 trades: use --trades 3 or more" --trades 2
expect 2 "cannot write --output no-such?dir/x.h5: No such file or directory" \
    --output $'no-such\ndir/x.h5'
expect 2 "--test-slow-factor must be between 1 and 1000, not 0.5" --test-slow-factor 0.5
# Every job's values as users mistype them: 0 where 0 is no count, a memory limit
# below what a run needs before its first task (the floor named), options that
# contradict each other (both named), more threads than the kernel allows.
models=(--jobs models --tasks 100 --delay-ms 1)
pool=(--jobs pool --connections 10)
for ranks in 0 2; do
    expect "$ranks" "--cpus must be at least 1, not 0" "${models[@]}" --cpus 0
    expect "$ranks" "--mem-limit must be at least 1, not 0" "${models[@]}" --mem-limit 0
    expect "$ranks" "a memory limit of 1 bytes (--mem-limit, or --profile's) is below" \
        "${models[@]}" --mem-limit 1
    expect "$ranks" "a memory limit of 4096 bytes (--mem-limit, or --profile's) is below \
the 0.68 MiB models/green needs before its first task" \
        --jobs models --mem-limit 4096 --stack-mode copy --carriers 2
    expect "$ranks" "--study-phases and --measure-s contradict each other" \
        "${pool[@]}" --study-phases --measure-s 5
    expect "$ranks" "--study-phases and --warmup-s contradict each other" \
        --jobs pool --study-phases --warmup-s 5
    expect "$ranks" "--cpus must be at least 1, not 0" "${pool[@]}" --cpus 0
    expect "$ranks" "--trace-threshold does nothing without --trace-pinning" \
        --trades 100 --trace-threshold 5
done
# A plain file can be made, but not the file parallel HDF5 makes through MPI-IO (here
# for want of the MPI-IO component the user named): found before any work.
for ranks in 0 2; do
    OMPI_MCA_io=no-such-component expect "$ranks" \
        "cannot create --output out.h5 through parallel HDF5 and MPI-IO" --trades 100
done

# Threads past what the kernel lets this user run, named before any thread starts;
# after the others, as the lower limit stays with this shell.
ulimit -S -u 5000
expect 0 "settle/threads needs 10000 OS threads on this node (1 rank(s) on it), past" \
    --jobs settle --trades 100 --os-threads 10000

# A job's own tasks past the address space that ulimit -v leaves, refused before any
# work and named by the job's own option: models' --tasks is per rank, so more ranks
# would not help, and the message does not offer them. Last, with the lower limit.
if [ -z "$sanitized" ]; then
    ulimit -S -v 1500000
    for ranks in 0 2; do
        expect "$ranks" "rank 0 needs 1.8 GiB of address space for 10000000 green-thread \
chunks of 192 bytes, but ulimit -v leaves it" --jobs models --tasks 10000000 \
            --stack-mode copy
        if ! grep -q -- ' GiB: use fewer --tasks$' stderr.txt; then
            echo "FAIL (ranks=$ranks, models --tasks 10000000): no 'use fewer --tasks'"
            fails=$((fails + 1))
        fi
    done
fi

[ "$fails" = 0 ] && echo "bad input: every case exits 2 with one message and no file"
exit "$((fails > 0))"
