#!/usr/bin/env bash
# The schema docs/schema.md documents between its two markers is, byte for byte, the
# one `loomdist --schema` prints from the jobs' declarations.
# Usage: test_schema_doc.sh LOOMDIST SCHEMA_MD
set -euo pipefail
bin=$1 doc=$2
want=$(mktemp) have=$(mktemp)
trap 'rm -f "$want" "$have"' EXIT
"$bin" --schema > "$want"
sed -n '/^<!-- schema: begin/,/^<!-- schema: end/p' "$doc" | sed '1d;$d' > "$have"
if ! diff -u "$have" "$want"; then
    echo "FAIL: docs/schema.md's schema block differs from loomdist --schema (above);" \
        "regenerate it with: loomdist --schema" >&2
    exit 1
fi
echo "schema: docs/schema.md matches loomdist --schema ($(wc -l < "$want") lines)"
