#!/usr/bin/env bash
# report.html at scale: S0 + K0 + O0 over generated KSODI units (the generator of ksodi_throughput.sh:
# answer ~1 KB, three documents of ~1 KB), with and without the report; prints the run times, the report's
# size next to detailed.jsonl, and how long headless Chromium takes to open it until the table is ready
# (wall time of the browser, and the page's own time from its script start to ready).
# usage: bench/report_bench.sh [build-dir]     sizes: REPORT_BENCH_SIZES="10000 100000"
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
[ -x "$build/evalgraph" ] && [ -f "$build/plugins/sink_html_report.so" ] || { echo "build first: cmake --build $build" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gen() { awk -v n="$1" -f "$repo/bench/ksodi_units.awk" > "$work/units.jsonl"; }
cp "$repo/bench/ksodi_units.yaml" "$work/p.yaml"
printf "%-8s %14s %14s %14s %12s %14s %14s\n" units run_s_no_report run_s_report detailed_MB report_MB open_wall_s page_ready_s
for n in ${REPORT_BENCH_SIZES:-10000 100000}; do
  gen "$n"
  rm -rf "$work/out"
  sync
  t0=$(date +%s.%N); "$build/evalgraph" run -q -j 2 --no-journal --no-report "$work/p.yaml" >/dev/null; t1=$(date +%s.%N)
  rm -rf "$work/out"
  sync
  t2=$(date +%s.%N); dir=$("$build/evalgraph" run -q -j 2 --no-journal "$work/p.yaml"); t3=$(date +%s.%N)
  det=$(stat -c %s "$dir/detailed.jsonl"); rep=$(stat -c %s "$dir/report.html")
  open_wall=- ready=-
  if [ -n "$browser" ]; then
    t4=$(date +%s.%N)
    timeout 300 "$browser" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$work/profile" \
      --virtual-time-budget=120000 --dump-dom "file://$dir/report.html" 2>/dev/null >"$work/dom.html" || true
    t5=$(date +%s.%N)
    open_wall=$(echo "$t5 - $t4" | bc)
    ms=$(grep -o 'data-ready-ms="[0-9]*"' "$work/dom.html" | grep -o '[0-9]*' || true)
    ready=${ms:+$(echo "scale=2; $ms / 1000" | bc)}
    grep -q 'data-ready="true"' "$work/dom.html" || ready="not-ready"
  fi
  printf "%-8s %14.2f %14.2f %14.1f %12.1f %14s %14s\n" "$n" "$(echo "$t1 - $t0" | bc)" "$(echo "$t3 - $t2" | bc)" \
    "$(echo "scale=1; $det / 1048576" | bc)" "$(echo "scale=1; $rep / 1048576" | bc)" "$open_wall" "$ready"
done
