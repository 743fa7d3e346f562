#!/bin/sh
# One green thread's whole life in instructions, counted by callgrind at the margin
# between two models runs on one CPU (scripts/bench-task-cost's figure), held to a
# bound in copy mode. The count is nearly the same from run to run, but not quite: the
# loop polls libuv every 50 us of wall time, and a loaded machine slows valgrind, so it
# polls more often a task (+5 to +10 a task seen with both CPUs busy). The bound is
# therefore above issue 34's target of 500, which the benchmark shows: it fails on a
# regression of about 6% and more, not on the machine's load.
# Skipped (77) without valgrind, for a build without optimization, whose count is
# another figure, and for a sanitizer's build, which valgrind cannot run.
# Usage: test_task_instructions.sh LOOMDIST DIR BUILD_TYPE [BOUND]
set -eu
loomdist=$1 dir=$2 build_type=$3 bound=${4:-520}
command -v valgrind > /dev/null || { echo "no valgrind: skipped"; exit 77; }
case $build_type in
Release | RelWithDebInfo | MinSizeRel) ;;
*) echo "a $build_type build counts other instructions: skipped"; exit 77 ;;
esac
if nm "$loomdist" 2> /dev/null | grep -Eq '__(asan|tsan)_init'; then
    echo "a sanitizer's build: skipped"
    exit 77
fi
rm -rf "$dir" && mkdir -p "$dir"
count() { # TASKS
    (cd "$dir" && valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$1" \
        "$loomdist" --jobs models --tasks "$1" --strategies green --iterations 1 \
        --cpus 1 --stack-mode copy --quiet --output "$dir/models.h5" > /dev/null \
        2> "$dir/vg.$1.log")
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$dir/vg.$1.log"
}
small=$(count 10000)
large=$(count 50000)
[ -n "$small" ] && [ -n "$large" ] || { echo "callgrind counted nothing" >&2; exit 1; }
awk -v a="$small" -v b="$large" -v bound="$bound" 'BEGIN {
    per = (b - a) / 40000
    printf "copy mode: %.1f instructions a task at the margin (%d at 10,000 tasks, %d at 50,000); bound %d\n", per, a, b, bound
    exit per <= bound ? 0 : 1
}'
