#!/usr/bin/env bash
# The trace reader (dataset format otlp, docs/traces.md) on generated OTLP/JSON files as the Collector's file
# exporter writes them: 100 MB (120,000 spans in 24,000 traces) and 1 GB (1,000,000 spans in 200,000 traces),
# each trace's 5 spans spread over several export requests (bench/traces_gen.py). Prints MB/s (wall clock and
# CPU: user+sys), records and peak RSS (/usr/bin/time -v) of eg-otlp-read, which reads every record as the engine
# does; then `evalgraph run` over the 100 MB file with the JSONL sink only (the engine's own cost added).
# Targets (#38): >= 100 MB/s on one core, peak RSS <= 300 MB for 1 GB. BENCH_SIZES="100" runs one size only.
#   bash bench/traces_bench.sh [build-dir]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null 2>&1 || true; }
if [ ! -x "$build/eg-otlp-read" ] || [ ! -x "$build/evalgraph" ] || [ ! -f "$build/plugins/sink_jsonl.so" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target eg-otlp-read evalgraph sink_jsonl >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf "%-6s %8s %8s %8s %9s %10s %10s %12s\n" size spans traces records seconds MB/s_wall MB/s_cpu peak_RSS_MB
for size in ${BENCH_SIZES:-100 1000}; do
  if [ "$size" = 100 ]; then traces=24000; bytes=1000; else traces=200000; bytes=1290; fi
  /usr/bin/python3 "$repo/bench/traces_gen.py" "$work/t.jsonl" "$traces" "$bytes"
  mb=$(( $(stat -c %s "$work/t.jsonl") / 1000000 ))
  sync
  /usr/bin/time -v -o "$work/time" "$build/eg-otlp-read" "$work/t.jsonl" 2>"$work/read.json"
  python3 - "$work/read.json" "$work/time" "$size" <<'PY'
import json, re, sys
out = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
t = open(sys.argv[2]).read()
num = lambda k: float(re.search(k + r": ([0-9.]+)", t).group(1))
cpu = num("User time \(seconds\)") + num("System time \(seconds\)")
rss = num(r"Maximum resident set size \(kbytes\)") / 1024
r = out["reader"]
print("%-6s %8d %8d %8d %9.2f %10.1f %10.1f %12.0f" % (sys.argv[3] + "MB", r["spans"], r["traces"], out["records"],
      out["seconds"], out["mb_per_s"], out["mb"] / cpu, rss))
if r["unmapped"]:
    print("  unmapped:", r["unmapped"])
PY
  if [ "$size" = 100 ]; then
    cat >"$work/p.yaml" <<YAML
name: traces-bench
dataset: {path: $work/t.jsonl, format: otlp}
nodes: []
sinks:
  - uses: sink.jsonl
    with: {file: records.jsonl}
output: {dir: $work/out}
YAML
    start=$(date +%s.%N)
    /usr/bin/time -f "%M %U %S" -o "$work/rss" "$build/evalgraph" run -q --no-report "$work/p.yaml" >/dev/null
    end=$(date +%s.%N)
    read -r rss user sys < "$work/rss"
    awk -v mb="$mb" -v s="$(echo "$end - $start" | bc)" -v u="$user" -v y="$sys" -v r="$rss" \
      'BEGIN { printf "  evalgraph run, 100 MB, JSONL sink: %.2f s, %.1f MB/s wall, %.1f MB/s CPU, peak RSS %.0f MB\n", s, mb / s, mb / (u + y), r / 1024 }'
    rm -rf "$work/out"
  fi
  rm -f "$work/t.jsonl"
done
