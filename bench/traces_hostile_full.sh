#!/usr/bin/env bash
# The trace reader's hostile inputs at full size (#38; the ctest cases in tests/traces use lowered limits to stay
# fast): each file is read by `evalgraph run` with the JSONL sink, and the script prints the exit status (0-3
# expected), the reasons counted in run.json's dataset_reader.unmapped, the records written, wall time and peak RSS.
#   1. one trace of 1,000,000 spans (1,000 export requests of 1,000 spans) beside 10 ordinary traces: the big one
#      is over max_trace_spans (100,000) and counted, the others read
#   2. a span with a 100 MB attribute (its export request is a 100 MB line) beside 10 ordinary traces: the line is
#      over max_request_mb (64) and counted, the others read
#   3. the same file with max_request_mb: 256: the span is read, its record is over limits.record_bytes and fails
#      alone (exit 1), the others are written
#   bash bench/traces_hostile_full.sh [BUILD_DIR]       (needs ~1.5 GB in $TMPDIR; about a minute)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]

def span(tid, sid, parent, name, attrs):
    s = {"traceId": tid, "spanId": sid, "name": name, "kind": 1, "startTimeUnixNano": "1700000000000000000",
         "endTimeUnixNano": "1700000001000000000",
         "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs]}
    if parent:
        s["parentSpanId"] = parent
    return s

def request(spans):
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]},
                                          "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}]}]}) + "\n"

def ordinary(i, big_answer=None):
    tid = "%032x" % (0xabc000 + i)
    return [span(tid, "%016x" % (0x100 + i), None, "chat", [
        ("gen_ai.operation.name", "chat"), ("gen_ai.request.model", "m"),
        ("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": "where is my order %d" % i}]}])),
        ("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": big_answer or "on its way"}]}]))])]

with open(work + "/many_spans.jsonl", "w") as f:
    tid = "%032x" % 0xfeed
    for r in range(1000):
        f.write(request([span(tid, "%016x" % (r * 1000 + k + 1), "%016x" % 1 if r * 1000 + k else None, "step",
                              [("gen_ai.operation.name", "chat")]) for k in range(1000)]))
    for i in range(10):
        f.write(request(ordinary(i)))
with open(work + "/big_attribute.jsonl", "w") as f:
    for i in range(5):
        f.write(request(ordinary(i)))
    f.write(request(ordinary(99, big_answer="x" * (100 << 20))))
    for i in range(5, 10):
        f.write(request(ordinary(i)))
PY
printf "%-34s %6s %8s %9s %8s  %s\n" case exit records seconds RSS_MB "unmapped (run.json dataset_reader)"
cases=0
run_case() {
  local name=$1 file=$2 extra=$3 out=$work/out-$((++cases))
  cat >"$work/p.yaml" <<YAML
name: hostile-$name
dataset: {path: $file, format: otlp$extra}
nodes: []
sinks:
  - uses: sink.jsonl
    with: {file: records.jsonl}
output: {dir: $out}
YAML
  local start end rc=0
  start=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$work/rss" "$build/evalgraph" run -q --no-report "$work/p.yaml" >/dev/null 2>"$work/err" || rc=$?
  end=$(date +%s.%N)
  /usr/bin/python3 - "$out" "$rc" "$name" "$(echo "$end - $start" | bc)" "$(tail -1 "$work/rss")" "$work/err" <<'PY'
import glob, json, sys
out, rc, name, secs, rss = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), int(sys.argv[5]) / 1024
runs = glob.glob(out + "/*/run.json")
r = json.load(open(runs[0])) if runs else {}
reader = r.get("dataset_reader", {})
print("%-34s %6d %8s %9.1f %8.0f  %s" % (name, rc, r.get("records", "-"), secs, rss, json.dumps(reader.get("unmapped", {}))))
if rc == 2:
    print("  " + open(sys.argv[6]).read().strip()[:300])
if not 0 <= rc <= 3:
    sys.exit("  exit status outside 0-3")
PY
}
run_case "1M spans in one trace" "$work/many_spans.jsonl" ""
run_case "100 MB attribute" "$work/big_attribute.jsonl" ""
run_case "100 MB attribute, max_request_mb 256" "$work/big_attribute.jsonl" ", options: {max_request_mb: 256}"
