#!/bin/sh
# The micro job's task strategy on one rank, small: it runs and reports one green
# thread's life and an OS thread's (ns and CPU ns per task, each a number), and says
# whether the machine exposes hardware counters, with their figures exactly when it
# does. No figure is held to a time: a margin between two runs may even dip below
# zero on a busy machine.
set -eu
loomdist=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
"$loomdist" --jobs micro --strategies task --micro-max 1000 --iterations 1 --quiet \
    --output "$dir/task.h5" > "$dir/table.txt"
figure() { awk -v f="$1" '$1 == "task" && $2 == f { print $3 }' "$dir/table.txt"; }
for f in green_ns green_cpu_ns os_ns os_cpu_ns speedup; do
    v=$(figure "$f")
    printf '%s\n' "$v" | grep -Eq '^-?[0-9.]+(e[-+]?[0-9]+)?$' || {
        echo "task figure $f is '$v', not a number" >&2
        exit 1
    }
done
exposed=$(figure counters_exposed)
instructions=$(figure green_instructions)
case $exposed in
1) [ -n "$instructions" ] || { echo "counters exposed, but no instructions" >&2; exit 1; } ;;
0) [ -z "$instructions" ] || { echo "counters not exposed, yet instructions" >&2; exit 1; } ;;
*) echo "counters_exposed is '$exposed'" >&2; exit 1 ;;
esac
echo "micro task figures ok (counters exposed: $exposed)"
