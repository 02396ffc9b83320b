#!/usr/bin/env bash
# Sharding overhead and merge speed.
#  1. CPU: KSODI-Standard (S0 + K0 + O0, sinks detailed.jsonl, detailed.csv, summary.md; no report) over
#     generated units (ksodi_throughput.sh's generator: answer ~1 KB, three documents of ~1 KB): one run vs
#     N shards run one after another, total CPU time (user + sys) of each, and the ratio.
#  2. merge: M shards of R short records each (S0 only, ~1 KB detailed records), merged with detailed.jsonl
#     only (the merge's own cost) and with the three KSODI-Standard sinks: wall time, records/s, peak memory,
#     also at a tenth of the records, to show memory does not grow with the run.
# usage: bench/shard_bench.sh [build-dir]
#   env: UNITS (20000) SHARDS ("2 4 10") MERGE_SHARDS (10) MERGE_RECORDS (per shard, 100000)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
EG="$build/evalgraph"
[ -x "$EG" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
units=${UNITS:-20000}

gen() { awk -v n="$1" -v short="${2:-0}" -f "$repo/bench/ksodi_units.awk"; }
sinks='sinks:
  - {uses: sink.jsonl, with: {file: detailed.jsonl}}
  - {uses: sink.csv, with: {file: detailed.csv}}
  - {uses: ksodi.summary, with: {file: summary.md}}'

# cpu seconds (user+sys) of a command; its stdout in $work/stdout (last: its last line)
cpu() {
  /usr/bin/time -f "%U %S" -o "$work/time" "$@" > "$work/stdout"
  read -r u s < "$work/time"
  awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }'
}

gen "$units" > "$work/units.jsonl"
cat > "$work/p.yaml" <<YAML
name: ksodi-shard-bench
dataset: {path: units.jsonl}
nodes:
  - {id: s0, uses: ksodi.s0, inputs: {answer: assistant_text}}
  - {id: k0, uses: ksodi.k0}
  - {id: o0, uses: ksodi.o0, inputs: {answer: assistant_text}}
$sinks
output: {dir: out}
YAML
echo "1. CPU time, $units KSODI units, -j 2, no report ($(nproc) cores, $(date -u +%F))"
single_cpu=$(cpu "$EG" run -q -j 2 --no-report "$work/p.yaml")
single_dir=$(tail -n 1 "$work/stdout")
printf "%-22s %10s %8s\n" "" cpu_s ratio
printf "%-22s %10s %8s\n" "one run" "$single_cpu" "1.00"
for n in ${SHARDS:-2 4 10}; do
  total=0
  dirs=()
  for i in $(seq "$n"); do
    c=$(cpu "$EG" run -q -j 2 --no-report --shard "$i/$n" -o "$work/shards-$n" "$work/p.yaml")
    dirs+=("$(tail -n 1 "$work/stdout")")
    total=$(awk -v a="$total" -v b="$c" 'BEGIN { printf "%.2f", a + b }')
  done
  mc=$(cpu "$EG" merge -q "${dirs[@]}" -o "$work/merged-$n")
  cmp -s "$single_dir/detailed.jsonl" "$work/merged-$n/detailed.jsonl" || { echo "merged detailed.jsonl differs from the single run" >&2; exit 1; }
  printf "%-22s %10s %8s\n" "$n shards" "$total" "$(awk -v a="$total" -v b="$single_cpu" 'BEGIN { printf "%.3f", a / b }')"
  printf "%-22s %10s %8s\n" "$n shards + merge" "$(awk -v a="$total" -v b="$mc" 'BEGIN { printf "%.2f", a + b }')" \
    "$(awk -v a="$total" -v m="$mc" -v b="$single_cpu" 'BEGIN { printf "%.3f", (a + m) / b }')"
done
rm -rf "$work"/shards-* "$work"/merged-* "$work/out"

ms=${MERGE_SHARDS:-10}
mr=${MERGE_RECORDS:-100000}
echo
echo "2. merge: $ms shards of short records (S0 only; ~1 KB detailed records); sinks: detailed.jsonl only (the"
echo "   merge's own cost), or the KSODI-Standard three (CSV and summary parse every record: the sinks' cost)"
printf "%-8s %9s %10s %8s %14s %12s %12s
" sinks records shards_MB merge_s records_per_s peak_rss_MB detailed_MB
for sinkset in jsonl ksodi; do
  if [ $sinkset = jsonl ]; then ss='sinks:
  - {uses: sink.jsonl, with: {file: detailed.jsonl}}'; else ss=$sinks; fi
  cat > "$work/s.yaml" <<YAML
name: merge-bench
dataset: {path: short.jsonl}
nodes:
  - {id: s0, uses: ksodi.s0, inputs: {answer: assistant_text}}
$ss
output: {dir: out}
YAML
  for total in $((ms * mr / 10)) $((ms * mr)); do
    gen "$total" 1 > "$work/short.jsonl"
    dirs=()
    for i in $(seq "$ms"); do
      dirs+=("$("$EG" run -q -j 2 --no-report --shard "$i/$ms" -o "$work/mshards" "$work/s.yaml" | tail -n 1)")
    done
    mb=$(du -sm "$work/mshards" | cut -f1)
    sync
    t0=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$work/mtime" "$EG" merge -q "${dirs[@]}" -o "$work/m" > /dev/null
    t1=$(date +%s.%N)
    printf "%-8s %9s %10s %8.2f %14.0f %12.0f %12.0f\n" "$sinkset" "$total" "$mb" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
      "$(awk -v a="$t0" -v b="$t1" -v n="$total" 'BEGIN { print n / (b - a) }')" "$(awk '{ print $1 / 1024 }' "$work/mtime")" \
      "$(awk '{ print $1 / 1048576 }' <<<"$(stat -c %s "$work/m/detailed.jsonl")")"
    rm -rf "$work/mshards" "$work/m"
  done
done
