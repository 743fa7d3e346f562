#!/usr/bin/env bash
# The schema README.md documents between its two markers is, byte for byte, the one
# `loomdist --schema` prints from the jobs' declarations.
# Usage: test_schema_readme.sh LOOMDIST README
set -euo pipefail
bin=$1 readme=$2
want=$(mktemp) have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT
"$bin" --schema > "$want"
sed -n '/^<!-- schema: begin/,/^<!-- schema: end/p' "$readme" | sed '1d;$d' > "$have"
if ! diff -u "$have" "$want"; then
    echo "FAIL: README.md's schema block differs from loomdist --schema (above);" \
        "regenerate it with: loomdist --schema" >&2
    exit 1
fi
echo "schema: README.md matches loomdist --schema ($(wc -l < "$want") lines)"
