#!/usr/bin/env bash
# Installs the engine (built with g++) into a prefix, builds sdk/examples/word_count as a separate CMake
# project with clang++ against that installed SDK, and runs it in the installed engine.
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/sdk/examples/word_count" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
grep -q 'CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$work/build/CMakeCache.txt" || { echo "FAIL: not built with clang++"; exit 1; }
cmake --build "$work/build" >/dev/null
engine="$work/prefix/bin/evalgraph"
# Only the entry symbol is exported.
exported=$(nm -D --defined-only "$work/build/word_count.so" | awk '$2 ~ /[TDR]/ {print $3}')
[ "$exported" = "evalgraph_plugin_v1" ] || { echo "FAIL: exported symbols: $exported"; exit 1; }
listing=$("$engine" plugins --plugin-dir "$work/build")  # (not piped into grep -q: SIGPIPE + pipefail)
grep -q 'example.word_count' <<<"$listing" || { echo "FAIL: not listed"; echo "$listing"; exit 1; }
printf 'text\n"Hello there. Second one! 2024"\nword\n' > "$work/data.csv"
cat > "$work/p.yaml" <<YAML
name: third-party
dataset: {path: data.csv}
nodes:
  - id: wc
    uses: example.word_count
    with: {min_word_length: 2}
  - id: wc_words_only
    uses: example.word_count
    with: {min_word_length: 2, count_numbers: false}
sinks:
  - uses: sink.jsonl
    with: {file: out.jsonl}
output: {dir: out}
YAML
run_dir=$(CI=true "$engine" run -q --plugin-dir "$work/build" "$work/p.yaml")
first=$(head -n1 "$run_dir/out.jsonl")
echo "$first"
echo "$first" | grep -q '"wc":{"characters":29,"min_word_length":2,"sentences":2,"words":5}' || { echo "FAIL: output"; exit 1; }
echo "$first" | grep -q '"wc_words_only":{"characters":29,"min_word_length":2,"sentences":2,"words":4}' || { echo "FAIL: count_numbers"; exit 1; }
echo "PASS: clang++-built out-of-tree plugin ran in the g++-built installed engine"
