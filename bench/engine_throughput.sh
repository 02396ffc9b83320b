#!/usr/bin/env bash
# Engine throughput: a pass-through operator plus the JSONL sink over generated records.
# Prints records/s and peak RSS for 100k and 1M records (memory must not grow with the record count).
#   bash bench/engine_throughput.sh [build-dir]
#   EXPECT=1 bash bench/engine_throughput.sh   also runs each case with three expect: entries (docs/ci.md), side by
#                                              side: the 'expect' column says which (the cost of gathering them)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null 2>&1 || true; }
if [ ! -x "$build/evalgraph" ] || [ ! -f "$build/tests/engine/plugins/test_passthrough.so" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target evalgraph test_passthrough sink_jsonl >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen() {  # $1 records of ~100 bytes
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":%d,\"text\":\"record number %d with some words to carry along\"}\n", i, i }' > "$work/data.jsonl"
}
cat > "$work/p.yaml" <<YAML
name: throughput
dataset: {path: data.jsonl}
nodes:
  - id: pt
    uses: test.passthrough
sinks:
  - uses: sink.jsonl
    with: {file: out.jsonl}
output: {dir: out}
YAML
{ cat "$work/p.yaml"; cat <<YAML; } > "$work/p_expect.yaml"
expect:
  - {metric: pt.text, stat: share, equals: "record number 7 with some words to carry along", max: 0.5}
  - {metric: pt.text, stat: share, equals: "no such text", max: 0, where: {id: [1, 2, 3]}}
  - {metric: pt.text, stat: share, equals: "x", max: 1, confidence: 0.95}
YAML
variants=(p)
[ -n "${EXPECT:-}" ] && variants=(p p_expect)
printf "%-10s %-8s %-8s %12s %14s %12s\n" records jobs expect seconds records/s peak_RSS_MB
for n in 100000 1000000; do
  gen "$n"
  for j in 1 2; do
    for v in "${variants[@]}"; do
      rm -rf "$work/out"
      sync  # the previous run's output is flushed now, not while this run is timed
      start=$(date +%s.%N)
      /usr/bin/time -f "%M" -o "$work/rss" "$build/evalgraph" run -q --no-report -j "$j" --plugin-dir "$build/tests/engine/plugins" "$work/$v.yaml" >/dev/null
      end=$(date +%s.%N)
      lines=$(wc -l < "$work"/out/throughput__*/out.jsonl)
      [ "$lines" -eq "$n" ] || { echo "expected $n records, got $lines"; exit 1; }
      awk -v n="$n" -v j="$j" -v x="$([ "$v" = p ] && echo no || echo yes)" -v s="$start" -v e="$end" -v rss="$(cat "$work/rss")" \
        'BEGIN { t = e - s; printf "%-10d %-8d %-8s %12.2f %14.0f %12.1f\n", n, j, x, t, n / t, rss / 1024 }'
    done
  done
done
