#!/bin/sh
# The pool job, small, in one of its cases; check_pool.py reads the file.
#   copy, own  every strategy under 200 connections, in that stack mode: counts agree
#              with the generator's; warm-up capacity kept by pooled (and, with own
#              stacks, by fresh, whose recycled stacks keep their pages), not trimmed
#   limited    pooled under a memory limit: granted, with the group's counters, and
#              not killed
#   shared     models and pool in one run, sharing --mem-limit: one root attribute,
#              each job granted it (or, where no memory group can be made, each
#              said to be clamped)
#   killed     pooled under 2 MiB: OOM-killed, reported with the group's counters,
#              and the run goes on
# limited and killed are skipped (77) where tests/memory_cgroup.py finds that no
# memory group can be made; where one can, the limit must be granted and the kill
# seen.
#   wrk        fresh driven by wrk, where wrk is installed (else skipped: 77)
#   bad        past the open-file limit, wrk asked for and missing, a pool option
#              without the job: each refused with one line and exit 2
set -eu
case=$1 loomdist=$2 python=$3 dir=$4/$1
rm -rf "$dir" && mkdir -p "$dir"
# Whether a memory group can be made here: "granted" or "refused", for check_pool.py.
memory=granted
case $case in
limited | shared | killed)
    rc=0
    "$python" "$(dirname "$0")/../memory_cgroup.py" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 77 ] || exit 1
    [ "$rc" = 0 ] || memory=refused
    [ "$rc" = 0 ] || [ "$case" = shared ] || exit 77 ;;
esac
common="--jobs pool --connections 200 --think-ms 10 --warmup-s 1 --measure-s 1"
common="$common --quiet --output $dir/pool.h5"
# limited's and shared's limit, 1 GiB (check_pool.py's LIMIT_MIB): the pooled server
# peaks at 4.5 MiB in its group in a plain build and 29 MiB under ASan, but TSan's
# runtime takes it to 196 MiB; under 256 MiB CI's TSan pass once saw it OOM-killed
# (204 errors), and under 180, 190 and 200 MiB it was killed each time.
limit=1073741824
case $case in
copy) # a warm-up 12 frames deep, to stand well clear of the steady state
    "$loomdist" $common --load builtin --stack-mode copy --warmup-depth 12 \
        > "$dir/table.txt" ;;
own) # own stacks keep whole pages: a warm-up 40 frames deep touches four
    "$loomdist" $common --load builtin --stack-mode own --warmup-depth 40 \
        > "$dir/table.txt" ;;
limited)
    "$loomdist" $common --load builtin --strategies pooled --mem-limit $limit \
        > "$dir/table.txt" ;;
shared) # one option, two jobs: each runs under it, and the file holds it once
    "$loomdist" $common --jobs models,pool --tasks 100 --strategies green,fresh \
        --load builtin --mem-limit $limit > "$dir/table.txt" ;;
killed) # far too little memory: the OOM killer ends the server, and the run says so
    "$loomdist" $common --load builtin --strategies pooled --mem-limit 2097152 \
        > "$dir/table.txt" ;;
wrk)
    command -v wrk > /dev/null || exit 77
    "$loomdist" $common --load wrk --strategies fresh > "$dir/table.txt" ;;
bad) # refused before any process starts: exit 2, one line, no file
    refused() {
        want=$1; shift
        if "$@" > "$dir/out.txt" 2> "$dir/err.txt"; then rc=0; else rc=$?; fi
        [ "$rc" = 2 ] && [ "$(wc -l < "$dir/err.txt")" = 1 ] &&
            grep -q -- "$want" "$dir/err.txt" && [ ! -e "$dir/pool.h5" ] || {
            echo "expected exit 2 and one line naming '$want', got $rc:" >&2
            cat "$dir/err.txt" >&2; exit 1; }
    }
    refused "ulimit -Hn" sh -c "ulimit -n 1000 && exec $loomdist $common --connections 2000"
    mkdir "$dir/bin" # what PATH had, less wrk (mpirun's own programs stay)
    for dir_on_path in $(echo "$PATH" | tr : ' '); do
        for f in "$dir_on_path"/*; do # an empty folder gives the pattern itself
            [ -e "$f" ] || continue
            [ "${f##*/}" = wrk ] || [ -e "$dir/bin/${f##*/}" ] || [ -L "$dir/bin/${f##*/}" ] ||
                ln -s "$f" "$dir/bin/"
        done
    done
    refused "wrk is not on PATH" env PATH="$dir/bin" "$loomdist" $common --load wrk
    refused "pool job" "$loomdist" --connections 10
    refused "contradict each other" "$loomdist" $common --study-phases --measure-s 5
    refused "needs before its first task" "$loomdist" $common --mem-limit 4096
    exit 0 ;;
*) echo "unknown case $case" >&2; exit 2 ;;
esac
grep -q "pool figures" "$dir/table.txt"
"$python" "$(dirname "$0")/check_pool.py" "$case" "$dir/pool.h5" "$memory"
# the analysis' table of the same run: a row per strategy, each with its rate
[ "$case" = copy ] || exit 0
"$(dirname "$0")/../../analysis/loomdist-pool" -o "$dir/report" "$dir/pool.h5" > /dev/null
exec "$python" "$(dirname "$0")/check_pool.py" report "$dir/pool.h5" "$dir/report/pool.md"
