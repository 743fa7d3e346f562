#!/bin/sh
# loomdist-forks around the models job; check_forks.py reads the JSON and the files.
#   forks  3 forks of two ranks each (an mpirun prefix), 1 warm-up and 2 measured
#          operations: JMH's fields and arithmetic, a new process per fork, and the
#          capped pool's rounds against green
#   study  --study alone: 5 forks, 3 warm-ups, 5 measurements
#   bad    bad input: one line and exit status 2, nothing run
#   figure two loads, then analysis/loomdist-models: the figure and the table made
set -eu
case=$1 forks=$2 loomdist=$3 python=$4 dir=$5/$1
rm -rf "$dir" && mkdir -p "$dir"
# forks compares green's rate with the capped pool's bound of 4 rounds of the delay on
# one CPU: at 5 ms a busy CPU's time slices alone can push green past 20 ms, so there
# each task waits 50 ms (as models.capped does).
delay=5
[ "$case" = forks ] && delay=50
models="--jobs models --delay-ms $delay --quiet --profile low"
case $case in
forks)
    "$forks" --forks 3 --warmup-iterations 1 --measurement-iterations 2 \
        --json "$dir/models.json" --output "$dir/models.h5" \
        mpirun -n 2 "$loomdist" $models --tasks 400 --thread-cap 100 \
        --strategies threads,green,hybrid > "$dir/out.txt" ;;
study)
    "$forks" --study --json "$dir/models.json" --output "$dir/models.h5" \
        "$loomdist" $models --tasks 100 --strategies green > "$dir/out.txt" ;;
bad)
    for args in "--forks 0 $loomdist" "--measurement-iterations x $loomdist" \
        "--bogus $loomdist" "--json" "--forks 2" "$loomdist --output x.h5" \
        "$loomdist --warmup 3" "$loomdist --iterations=3"; do
        status=0
        # shellcheck disable=SC2086  # each case is a list of words
        (cd "$dir" && "$forks" $args > out.txt 2> err.txt) || status=$?
        [ "$status" -eq 2 ] || { echo "$args: exit $status, not 2" >&2; exit 1; }
        [ "$(wc -l < "$dir/err.txt")" -eq 1 ] || { echo "$args: not one line" >&2; exit 1; }
        grep -q "^loomdist-forks: " "$dir/err.txt"
        ! ls "$dir"/*.h5 > /dev/null 2>&1 || { echo "$args: ran a fork" >&2; exit 1; }
    done
    "$forks" --help | grep -q -- "--forks N"
    "$loomdist" --help | grep -q -- "loomdist-forks --forks"
    echo "forks bad ok"
    exit 0 ;;
figure)
    for tasks in 100 300; do
        "$forks" --forks 2 --warmup-iterations 0 --measurement-iterations 2 \
            --json "$dir/models-$tasks.json" --output "$dir/models-$tasks.h5" \
            "$loomdist" $models --tasks $tasks --strategies green,stackless > /dev/null
    done
    "$(dirname "$0")/../../analysis/loomdist-models" "$dir"/models-*.json -o "$dir/report"
    exec "$python" "$(dirname "$0")/check_forks.py" figure "$dir" "$dir/report" ;;
*) echo "unknown case $case" >&2; exit 2 ;;
esac
grep -q "loomdist.models.green" "$dir/out.txt"
exec "$python" "$(dirname "$0")/check_forks.py" "$case" "$dir/models.json" "$dir/models.h5"
