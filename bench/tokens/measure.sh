#!/bin/bash
# The token counter against the real encodings (docs/cost.md): builds the corpus (corpus.py), counts each text
# with js-tiktoken (npm) and with eg-token-count (the approximation, and the exact counter over a .tiktoken
# file made by make_tiktoken.js), and prints the error per text (mean |error|, p95 |error|, error of the total).
# Usage: bench/tokens/measure.sh [BUILD_DIR]   (needs node and npm; installs js-tiktoken into a temp folder)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --build "$build" --target eg-token-count >/dev/null
counter=$build/eg-token-count
[ -x "$counter" ] || counter=$build/tests/llm/eg-token-count
(cd "$work" && npm install --silent --no-audit --no-fund js-tiktoken@1 >/dev/null)
python3 "$here/corpus.py" "$root" > "$work/corpus.jsonl"
echo "corpus: $(wc -l < "$work/corpus.jsonl") texts, $(wc -c < "$work/corpus.jsonl") bytes"
for enc in cl100k_base o200k_base; do
  NODE_PATH="$work/node_modules" node "$here/reference.js" $enc < "$work/corpus.jsonl" > "$work/ref.$enc"
  NODE_PATH="$work/node_modules" node "$here/make_tiktoken.js" $enc "$work/$enc.tiktoken" 2>/dev/null
  for mode in approximate exact; do
    arg=$enc; [ $mode = exact ] && arg="$work/$enc.tiktoken"
    "$counter" "$arg" < "$work/corpus.jsonl" > "$work/got" 2> "$work/speed"
    python3 - "$work/ref.$enc" "$work/got" "$enc $mode" "$(cat "$work/speed")" <<'PY'
import sys
ref = [int(x) for x in open(sys.argv[1])]
got = [int(x) for x in open(sys.argv[2])]
errs = sorted(abs(g - r) / r * 100 for r, g in zip(ref, got) if r > 0)
exact = sum(1 for r, g in zip(ref, got) if r == g)
p95 = errs[int(0.95 * (len(errs) - 1))]
print(f"{sys.argv[3]:>24}: texts {len(ref)}, equal {exact} ({exact / len(ref) * 100:.1f} %), mean |err| {sum(errs) / len(errs):.1f} %, "
      f"p95 |err| {p95:.1f} %, total {sum(got)} vs {sum(ref)} ({(sum(got) - sum(ref)) / sum(ref) * 100:+.1f} %)  [{sys.argv[4].split(': ', 1)[1]}]")
PY
  done
done
