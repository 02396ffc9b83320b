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
gen() {
  awk -v n="$1" 'BEGIN {
    srand(42);
    split("tarif vertrag kündigung rechnung frist kunde portal störung router leitung gebühr monat vertragslaufzeit " \
          "policy employee leave request manager approval payroll benefit contract notice period overtime remote " \
          "server deployment container database index query latency cache timeout retry config release", W, " ");
    nw = length(W);
    for (i = 0; i < n; i++) {
      docs = "[";
      for (d = 0; d < 3; d++) {
        t = "";
        while (length(t) < 1000) t = t sentence() " ";
        docs = docs (d ? "," : "") "{\"id\":\"d" i "-" d "\",\"text\":\"" t "\"}";
      }
      docs = docs "]";
      a = "";
      while (length(a) < 1000) { a = a (rand() < 0.2 ? "Laut Dokument [1] " : "") sentence() " "; if (rand() < 0.15) a = a "\\n\\n- "; }
      sp = (i % 3 == 0) ? "Du bist ein Assistent. Antworte als Liste mit maximal 5 Punkten." : (i % 3 == 1) ? "You are a support bot. Answer only from the documents, as JSON." : "Beantworte die Frage.";
      printf "{\"id\":\"u%d\",\"context_scope_id\":\"bench_%d\",\"system_prompt\":\"%s\",\"tool_profile\":\"kb_search(query)\",\"user_text\":\"Erkläre bitte %s und %s?\",\"retrieved_docs\":%s,\"assistant_text\":\"%s\"}\n", i, i % 2, sp, W[int(rand()*nw)+1], W[int(rand()*nw)+1], docs, a;
    }
  }
  function sentence(   s, k, m) { m = 6 + int(rand() * 10); s = ""; for (k = 0; k < m; k++) s = s (k ? " " : "") W[int(rand() * nw) + 1]; return toupper(substr(s, 1, 1)) substr(s, 2) "."; }' > "$work/units.jsonl"
}
cat > "$work/p.yaml" <<YAML
name: ksodi-bench
dataset: {path: units.jsonl}
nodes:
  - {id: s0, uses: ksodi.s0, inputs: {answer: assistant_text}}
  - {id: k0, uses: ksodi.k0}
  - {id: o0, uses: ksodi.o0, inputs: {answer: assistant_text}}
sinks:
  - uses: sink.jsonl
    with: {file: detailed.jsonl}
output: {dir: out}
YAML
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
