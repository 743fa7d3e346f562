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
# Usage: test_task_instructions.sh BENCH_TASK_COST LOOMDIST BUILD_TYPE [BOUND]
set -eu
bench=$1 loomdist=$2 build_type=$3 bound=${4:-520}
command -v valgrind > /dev/null || { echo "no valgrind: skipped"; exit 77; }
case $build_type in
Release | RelWithDebInfo | MinSizeRel) ;;
*) echo "a $build_type build counts other instructions: skipped"; exit 77 ;;
esac
if nm "$loomdist" 2> /dev/null | grep -Eq '__(asan|tsan)_init'; then
    echo "a sanitizer's build: skipped"
    exit 77
fi
out=$(MODES=copy TOP=0 "$bench" "$loomdist")
printf '%s\n' "$out"
per=$(printf '%s\n' "$out" | awk '$1 == "copy" { print $2 }')
[ -n "$per" ] || { echo "bench-task-cost gave no copy-mode figure" >&2; exit 1; }
awk -v per="$per" -v bound="$bound" 'BEGIN {
    printf "copy mode: %.1f instructions a task at the margin; bound %d\n", per, bound
    exit per <= bound ? 0 : 1
}'
