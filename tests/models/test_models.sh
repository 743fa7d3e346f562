#!/bin/sh
# The models job, small, in one of three cases; check_models.py reads the file.
#   low      every model on two ranks under the low profile (1 CPU, 512 MiB each)
#   clamped  more CPUs and memory than any machine has: granted less, and said so
#   capped   a pool of 100 threads for 400 tasks needs 4 rounds of the delay, and
#            green, one
#   nocgroup no memory group may be made (LOOMDIST_CGROUP=none): no limit, said so
#   v2       only a cgroup v2 group may be made: the limit, or no limit said so
#   killed   on two ranks, a limit 1000 pool threads outgrow and stackless does not:
#            threads' runs are killed and said so, stackless's run, the run ends 0
# low, v2 and killed ask tests/memory_cgroup.py first whether such a group can be made
# here: where it can, the limit must be granted; where not, low and v2 must say it was
# refused and clamped, and killed is skipped (77): it has nothing to measure.
set -eu
case=$1 loomdist=$2 python=$3 dir=$4/$1
rm -rf "$dir" && mkdir -p "$dir"
memory=granted
case $case in
low | v2 | killed)
    [ "$case" = v2 ] && only=v2 || only=
    rc=0
    "$python" "$(dirname "$0")/../memory_cgroup.py" ${only:+"$only"} || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 77 ] || exit 1
    [ "$rc" = 0 ] || memory=refused
    [ "$case:$memory" != killed:refused ] || exit 77 ;;
esac
# capped compares green's time with 4 rounds of the delay on one CPU: at 5 ms a busy
# CPU's time slices alone pushed green past 20 ms (24-48 ms beside two busy loops), so
# it waits 50 ms, and the 4 rounds are 200 ms.
delay=5
[ "$case" = capped ] && delay=50
common="--jobs models --delay-ms $delay --iterations 3 --quiet --output $dir/models.h5"
case $case in
low) mpirun -n 2 "$loomdist" $common --tasks 200 --profile low > "$dir/table.txt" ;;
clamped)
    "$loomdist" $common --tasks 200 --strategies green,threads --profile high \
        --cpus 1024 --mem-limit 1125899906842624 > "$dir/table.txt" ;;
capped)
    "$loomdist" $common --tasks 400 --thread-cap 100 --strategies threads,green \
        --profile low > "$dir/table.txt" ;;
nocgroup | v2)
    [ "$case" = v2 ] && only=v2 || only=none
    LOOMDIST_CGROUP=$only "$loomdist" $common --tasks 200 --strategies green \
        --profile low > "$dir/table.txt" ;;
killed)
    mpirun -n 2 "$loomdist" $common --tasks 1000 --strategies threads,stackless \
        --mem-limit 8388608 > "$dir/table.txt" ;;
*) echo "unknown case $case" >&2; exit 2 ;;
esac
grep -q "Score (ops/s)" "$dir/table.txt"
exec "$python" "$(dirname "$0")/check_models.py" "$case" "$dir/models.h5" "$dir/table.txt" \
    "$memory"
