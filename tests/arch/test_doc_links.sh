#!/usr/bin/env bash
# Every relative link and image in README.md, ARCHITECTURE.md, docs/ and results/
# names a file or folder that exists, so moving a page cannot strand a reader.
# Anchors (#...) and URLs are not checked.
# Usage: test_doc_links.sh SOURCE_DIR
set -euo pipefail
src=$1
cd "$src"
bad=0 n=0
while IFS= read -r page; do
    dir=$(dirname "$page")
    # ](target) of every [text](target) and ![alt](target), outside code spans.
    while IFS= read -r target; do
        target=${target%%#*}
        [[ -z $target || $target == *://* || $target == mailto:* ]] && continue
        n=$((n + 1))
        if [[ ! -e $dir/$target ]]; then
            echo "FAIL: $page links to $target, which does not exist" >&2
            bad=1
        fi
    done < <(sed 's/`[^`]*`//g' "$page" | grep -oE '\]\([^) ]+\)' | sed 's/^](//; s/)$//')
done < <(find README.md ARCHITECTURE.md docs results -name '*.md' | sort)
[ "$bad" -eq 0 ] || exit 1
echo "links: all $n relative links of the docs resolve"
