#!/usr/bin/env bash
# Every option `loomdist --help` lists has its row in README.md's usage table.
# Usage: test_usage_readme.sh LOOMDIST README
set -euo pipefail
bin=$1 readme=$2
missing=0 n=0
for opt in $("$bin" --help | grep -oE '^  --[a-z-]+' | sort -u); do
    n=$((n + 1))
    if ! grep -qE "^\| ([a-z]+: )?\`$opt[ \`]" "$readme" &&
        ! grep -qE "^\| .*\`$opt\`" "$readme"; then
        echo "FAIL: $opt is in --help but not in README.md's usage table" >&2
        missing=$((missing + 1))
    fi
done
[ "$missing" -eq 0 ] || exit 1
echo "usage: README.md's table has all $n options of --help"
