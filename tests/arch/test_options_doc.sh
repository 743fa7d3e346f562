#!/usr/bin/env bash
# docs/options.md is what scripts/gen-docs makes from this build's `loomdist --help`,
# byte for byte, and has a row for every option --help lists; every option README.md's
# table of the most used names is one --help lists.
# Usage: test_options_doc.sh LOOMDIST SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
doc=$src/docs/options.md
want=$(mktemp)
trap 'rm -f "$want"' EXIT
"$src/scripts/gen-docs" --options "$bin" > "$want"
if ! diff -u "$doc" "$want"; then
    echo "FAIL: docs/options.md differs from what loomdist --help gives (above);" \
        "regenerate it with: scripts/gen-docs build/loomdist" >&2
    exit 1
fi
help=$("$bin" --help | grep -oE '^  --[a-z-]+' | sed 's/^ *//' | sort -u)
missing=0 n=0
for opt in $help; do
    n=$((n + 1))
    grep -qE "^\| \`$opt[ \`]" "$doc" ||
        { echo "FAIL: $opt is in --help but has no row in docs/options.md" >&2; missing=1; }
done
m=0
for opt in $(grep -E '^\| `--' "$src/README.md" | grep -oE '`--[a-z-]+' | tr -d '`' | sort -u); do
    m=$((m + 1))
    grep -qx -- "$opt" <<<"$help" ||
        { echo "FAIL: README.md's table names $opt, which --help does not list" >&2; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
[ "$m" -gt 0 ] || { echo "FAIL: README.md has no table of options" >&2; exit 1; }
echo "options: docs/options.md is --help's ($n options); README.md's $m are all real"
