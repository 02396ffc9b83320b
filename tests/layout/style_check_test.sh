#!/usr/bin/env bash
# .ci/style can fail: in a throwaway clone of this tree, checked against its own HEAD (so that only what this test
# changes counts), the clone as it is passes and a misformatted line added to a source file makes it exit 1
# naming the file.
set -euo pipefail
src=${1:?usage: style_check_test.sh SOURCE_DIR}
if ! git -C "$src" rev-parse -q --verify HEAD >/dev/null 2>&1; then echo "not a git checkout: skipped"; exit 0; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --shared "$src" "$tmp/tree"
cp "$src/.ci/style" "$src/.ci/style-base" "$tmp/tree/.ci/"  # (the working tree's, committed or not)
export STYLE_BASE=HEAD
"$tmp/tree/.ci/style" >/dev/null
printf 'int   planted_by_style_test( ){return 1;}\n' >> "$tmp/tree/lib/llm/tokens.cpp"
if out=$("$tmp/tree/.ci/style" 2>&1); then
  echo "FAIL: .ci/style passed a misformatted line"; exit 1
fi
grep -q "lib/llm/tokens.cpp" <<<"$out" || { echo "FAIL: the file is not named:"; echo "$out"; exit 1; }
echo "ok: a planted misformatted line fails .ci/style, naming its file"
