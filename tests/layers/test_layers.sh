#!/usr/bin/env bash
# The runtime's files call one another one way only. From the symbols each object file
# of ARCHIVE defines and uses (nm), a file depends on every file that defines a symbol
# it uses; that graph must have no cycle. Prints the files bottom to top, or the loop.
# Usage: test_layers.sh NM ARCHIVE
set -euo pipefail
nm=$1 archive=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# "archive:member.c.o: [address] type symbol": the member without .o, and the symbol.
symbols() {
    "$nm" -A -g "$@" "$archive" | awk -F: '{ n = split($NF, f, " "); m = $(NF - 1);
        sub(/\.o$/, "", m); print m, f[n] }' | sort -u
}
symbols --defined-only > "$work/defines"
symbols --undefined-only > "$work/uses"
[ -s "$work/defines" ] || { echo "FAIL: nm found no symbols in $archive" >&2; exit 1; }

# Pairs "definer user" for tsort, which lists the definer first; every file stands as
# a pair with itself too, so one that uses nothing of the others is listed all the same.
{
    awk '{ print $1, $1 }' "$work/defines"
    join -1 2 -2 2 <(sort -k 2 "$work/defines") <(sort -k 2 "$work/uses") |
        awk '$2 != $3 { print $2, $3 }'
} | sort -u > "$work/pairs"
if ! tsort "$work/pairs" > "$work/order" 2> "$work/loop"; then
    echo "FAIL: the files of $(basename "$archive") call one another in a loop:" >&2
    sed -n 's/^tsort: \([^ ]*\)$/  \1/p' "$work/loop" >&2
    exit 1
fi
echo "layers: $(basename "$archive") has no cycle; bottom to top:"
tr '\n' ' ' < "$work/order" | fold -s -w 88 | sed 's/^/  /'
echo
