#!/usr/bin/env bash
# A symbolic link planted at <output>.tmp, as anyone who may write to a shared output
# folder could: the run refuses with status 2 and one line, and the link and the file
# it points to are left as they were; no results file, under one rank and under two.
# Usage: test_symlink.sh LOOMDIST WORKDIR
set -uo pipefail
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
fresh "$2"
work=$(pwd)

for ranks in 0 2; do
    run_name=ranks-$ranks
    launcher=()
    [ "$ranks" -gt 0 ] && launcher=(mpirun -n "$ranks")
    echo "someone else's file" > victim
    rm -f "$work/out.h5" "$work/out.h5.tmp"
    ln -s "$work/victim" "$work/out.h5.tmp"
    launch "$run_name" "${launcher[@]}" "$bin" --trades 100 --output "$work/out.h5"
    finish_run
    [ "$run_rc" -eq 2 ] || fail "exited $run_rc, not 2"
    expect_lines 1 "^loomdist: $work/out.h5.tmp is in the way of --output and is not a file a run left \(a symbolic link, left alone\): remove it or choose another --output$"
    [ "$(cat victim)" = "someone else's file" ] || fail "the link's target was changed"
    [ -L "$work/out.h5.tmp" ] || fail "the link was removed"
    [ ! -e "$work/out.h5" ] || fail "a results file was left"
done
rm -f "$work/out.h5.tmp"
finish "symlink: a link planted at the temporary name is refused and left alone"
