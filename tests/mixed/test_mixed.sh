#!/bin/sh
# The mixed job, small, in one of four cases; check_mixed.py reads the file.
#   one     every layout on one rank, against settle's green and var's pool
#   ranks   the same on two ranks
#   bad     bad input exits 2 with one line, naming the option and the value it
#           refuses, and writes nothing; a --settle-cpus past the rank's CPUs is
#           clamped and said in the figures
#   figure  a sweep of --yield-every, and the figure analysis/mixed_sweep.py makes of it
set -eu
case=$1 loomdist=$2 python=$3 dir=$4/$1 src=$5
rm -rf "$dir" && mkdir -p "$dir"
small="--trades 200 --sims 2000 --latency-scale 0.02 --yield-every 100 --warmup 0
 --iterations 2 --quiet"
# settle's green and var's pool run on their own, as the results are compared across
# files of one seed; the alone phases inside each mixed run are compared in it too.
alone="--jobs settle,var --strategies green,pool --trades 200 --sims 2000
 --latency-scale 0.02 --quiet"
case $case in
one)
    "$loomdist" $alone --output "$dir/alone.h5" > /dev/null
    "$loomdist" $small --jobs mixed --output "$dir/mixed.h5" > "$dir/table.txt" ;;
ranks)
    "$loomdist" $alone --output "$dir/alone.h5" > /dev/null
    mpirun -n 2 "$loomdist" $small --jobs mixed --output "$dir/mixed.h5" \
        > "$dir/table.txt" ;;
bad)
    for arg in "yield-every 0" "settle-cpus 0" "yield-every x"; do
        opt=${arg% *} value=${arg#* } rc=0
        "$loomdist" --jobs mixed "--$opt" "$value" --output "$dir/bad.h5" \
            > "$dir/out.txt" 2>&1 || rc=$?
        [ "$rc" -eq 2 ] || { echo "--$arg: exit $rc, not 2" >&2; exit 1; }
        [ "$(wc -l < "$dir/out.txt")" -eq 1 ] || { cat "$dir/out.txt"; exit 1; }
        grep -qE -- "^loomdist: .*--$opt( |,|:|$)" "$dir/out.txt" &&
            grep -qw -- "$value" "$dir/out.txt" || {
            echo "--$arg: the line names another option or value:" >&2
            cat "$dir/out.txt" >&2
            exit 1
        }
        [ ! -e "$dir/bad.h5" ] || { echo "--$arg: wrote a file" >&2; exit 1; }
    done
    # more CPUs for settle than the rank has: clamped (one is left to VaR), and said
    "$loomdist" $small --jobs mixed --strategies split --settle-cpus 99 \
        --output "$dir/clamped.h5" > "$dir/out.txt"
    grep -Eq "^split +settle_cpus_asked +99 " "$dir/out.txt" &&
        grep -Eq "^split +settle_cpus +[0-9]+ " "$dir/out.txt" &&
        ! grep -Eq "^split +settle_cpus +99 " "$dir/out.txt" ||
        { cat "$dir/out.txt"; exit 1; }
    exit 0 ;;
figure)
    for k in 50 400 2000; do
        "$loomdist" $small --jobs mixed --yield-every $k \
            --output "$dir/k$k.h5" > /dev/null
    done
    "$python" "$src/analysis/mixed_sweep.py" --out "$dir/sweep" "$dir"/k*.h5
    exec "$python" "$(dirname "$0")/check_mixed.py" figure "$dir/sweep" "$dir"/k*.h5 ;;
*) echo "unknown case $case" >&2; exit 2 ;;
esac
grep -q "settle_p99_ms" "$dir/table.txt"
exec "$python" "$(dirname "$0")/check_mixed.py" "$case" "$dir/mixed.h5" "$dir/alone.h5"
