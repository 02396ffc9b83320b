#!/usr/bin/env bash
# Produces trace files with the real instrumentation libraries from the npm registry and checks that evalgraph
# reads each convention's file into the same records (answers, documents, tool calls, sessions).
#   tests/traces/make_traces.sh EVALGRAPH EG_TEST_LLM_SERVER [--update-fixtures]
# The small agent (agent/agent.js) uses the `openai` client instrumented by @opentelemetry/instrumentation-openai
# (GenAI conventions, content as log events), @arizeai/openinference-instrumentation-openai and
# @traceloop/instrumentation-openai (OpenLLMetry), calls the loopback LLM test server, and exports OTLP/HTTP
# JSON to agent/receiver.js, which writes the Collector file exporter's format. The npm packages are installed
# once into $EG_TRACES_NPM_DIR (default ~/.cache/evalgraph/traces-npm). Exit 77 (skipped) when npm or the
# registry cannot be reached. --update-fixtures copies the files to tests/traces/fixtures/ (the C++ tests' input).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
evalgraph=$(realpath "$1")
server_bin=$(realpath "$2")
update=${3:-}
npm_dir=${EG_TRACES_NPM_DIR:-$HOME/.cache/evalgraph/traces-npm}
packages=(openai@6 @opentelemetry/api @opentelemetry/api-logs @opentelemetry/sdk-trace-node @opentelemetry/sdk-trace-base
  @opentelemetry/exporter-trace-otlp-http @opentelemetry/sdk-logs @opentelemetry/exporter-logs-otlp-http
  @opentelemetry/resources @opentelemetry/instrumentation @opentelemetry/instrumentation-openai
  @arizeai/openinference-instrumentation-openai @traceloop/instrumentation-openai)

command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node and npm are needed"; exit 77; }
if [ ! -f "$npm_dir/.installed" ]; then
  mkdir -p "$npm_dir"
  (cd "$npm_dir" && [ -f package.json ] || npm init -y >/dev/null)
  if ! (cd "$npm_dir" && timeout 600 npm install --no-audit --no-fund "${packages[@]}" >npm-install.log 2>&1); then
    echo "SKIP: npm could not install the instrumentation packages (registry unreachable?); see $npm_dir/npm-install.log"
    exit 77
  fi
  touch "$npm_dir/.installed"
fi
export NODE_PATH=$npm_dir/node_modules

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "${EG_TRACES_KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

wait_for() {  # file: prints the port once "listening on X" is there
  for _ in $(seq 200); do
    local v
    v=$(sed -n 's/^listening on //p' "$1" 2>/dev/null || true)
    [ -n "$v" ] && { echo "$v"; return 0; }
    sleep 0.05
  done
  echo "no 'listening on' in $1" >&2
  cat "$1" >&2
  return 1
}

"$server_bin" --reply "Answer to: {last_user}" >"$work/server.out" 2>"$work/server.err" &
pids+=($!)
llm=$(wait_for "$work/server.out")
for conv in genai openinference openllmetry; do
  node "$here/agent/receiver.js" "$work/$conv" >"$work/recv-$conv.out" &
  rpid=$!
  port=$(wait_for "$work/recv-$conv.out")
  timeout 120 node "$here/agent/agent.js" "$conv" "$llm" "http://127.0.0.1:$port"
  kill "$rpid"
  wait "$rpid" 2>/dev/null || true
done

# evalgraph reads each file (GenAI: spans and log events in two files, as two Collector file exporters write).
for conv in genai openinference openllmetry; do
  logs=""
  [ -f "$work/$conv-logs.jsonl" ] && logs="  logs: $conv-logs.jsonl"
  cat >"$work/$conv.yaml" <<YAML
name: traces-$conv
dataset:
  path: $conv-traces.jsonl
  format: otlp
$logs
nodes: []
sinks:
  - uses: sink.jsonl
    with: {file: records.jsonl}
output:
  dir: out-$conv
YAML
  "$evalgraph" run "$work/$conv.yaml" --quiet >"$work/$conv.run.log" 2>&1 || { cat "$work/$conv.run.log"; exit 1; }
done
/usr/bin/python3 "$here/compare_records.py" "$work"/out-genai/*/records.jsonl "$work"/out-openinference/*/records.jsonl \
  "$work"/out-openllmetry/*/records.jsonl

if [ "$update" = "--update-fixtures" ]; then
  mkdir -p "$here/fixtures"
  for f in "$work"/*-traces.jsonl "$work"/*-logs.jsonl; do cp "$f" "$here/fixtures/"; done
  echo "fixtures updated in $here/fixtures"
fi
echo "make_traces: the three conventions give the same records"
