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
# Deterministic generator: sentences drawn from two vocabularies, some with attribution markers, formats
# requested in some system prompts, answers partly grounded in the documents and partly drifting.
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
