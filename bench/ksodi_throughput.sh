#!/usr/bin/env bash
# KSODI-Standard throughput: S0, K0 and O0 over generated evaluation units (answer ~1 KB, three retrieved
# documents of ~1 KB each, German/English mix) with the JSONL sink. Prints units/s and peak RSS for
# 10,000 and 100,000 units (memory must stay flat). The operators are measured: the run's default report.html
# (its own cost, see bench/report_bench.sh) is turned off. BENCH_SIZES="10000" runs one size only.
#   bash bench/ksodi_throughput.sh [build-dir] [jobs]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
jobs=${2:-2}
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null 2>&1 || true; }
if [ ! -x "$build/evalgraph" ] || [ ! -f "$build/plugins/ksodi_o0.so" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target evalgraph ksodi_s0 ksodi_k0 ksodi_o0 sink_jsonl >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen() { awk -v n="$1" -f "$repo/bench/ksodi_units.awk" > "$work/units.jsonl"; }
cp "$repo/bench/ksodi_units.yaml" "$work/p.yaml"
printf "%-8s %-5s %10s %10s %14s %12s\n" units jobs seconds units/s CPU_us/unit peak_RSS_MB
for n in ${BENCH_SIZES:-10000 100000}; do
  gen "$n"
  rm -rf "$work/out"
  sync  # the previous run's output is flushed now, not while this run is timed
  start=$(date +%s.%N)
  /usr/bin/time -f "%M %U %S" -o "$work/rss" "$build/evalgraph" run -q --no-report -j "$jobs" "$work/p.yaml" >/dev/null
  end=$(date +%s.%N)
  lines=$(wc -l < "$work"/out/ksodi-bench__*/detailed.jsonl)
  [ "$lines" -eq "$n" ] || { echo "expected $n units, got $lines"; exit 1; }
  read -r rss user sys < "$work/rss"
  # CPU_us/unit: user + system time of all threads per unit (the cost that -j spreads over the cores).
  awk -v n="$n" -v j="$jobs" -v s="$start" -v e="$end" -v rss="$rss" -v cpu="$user $sys" \
    'BEGIN { t = e - s; split(cpu, c, " "); printf "%-8d %-5d %10.2f %10.0f %14.0f %12.1f\n", n, j, t, n / t, (c[1] + c[2]) * 1e6 / n, rss / 1024 }'
done
