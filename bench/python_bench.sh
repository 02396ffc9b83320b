#!/usr/bin/env bash
# The python node (docs/python.md) side by side with what it replaces, in one run:
#  1. 10,000 and 100,000 records through a trivial check (`len` of a field) as a python node, and through the
#     C++ pass-through test node, -j 1 and -j 2: seconds, the ratio python / C++, peak RSS (flat: 10k vs 100k).
#  2. The same 1,000 checks as promptfoo's Python assertion (get_assert in a file) and as a python node with
#     `interface: promptfoo` on the same file; promptfoo is installed from the npm registry into a temporary
#     folder (PROMPTFOO_VERSION, default 0.120.0) and run against its echo provider, also with a built-in
#     assertion so that the per-check cost can be told from promptfoo's own; skipped with a message when npm or
#     the registry cannot be reached (SKIP_PROMPTFOO=1 skips it on purpose).
#  3. A Python judge: 1,000 records x one evalgraph.chat against the loopback server (tests/llm/server) at
#     100 ms per answer, max_in_flight 64, default flags: wall against N*L/C = 1000 * 0.1 / 64 = 1.5625 s; then
#     the same run with its cache: requests sent (must be 0).
#   bash bench/python_bench.sh [build-dir]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
py=${PYTHON3:-/usr/bin/python3}
for t in evalgraph plugins/python.so plugins/sink_jsonl.so tests/engine/plugins/test_passthrough.so eg-test-llm-server; do
  [ -e "$build/$t" ] || { echo "python_bench: $build/$t is missing; build it: cmake --build $build --target evalgraph python sink_jsonl test_passthrough eg-test-llm-server" >&2; exit 2; }
done
command -v /usr/bin/time >/dev/null || { echo "python_bench: needs /usr/bin/time (apt install time)" >&2; exit 2; }
work=$(mktemp -d)
# shellcheck source=bench/test_server.sh
. "$repo/bench/test_server.sh"
trap 'stop_test_server; if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi' EXIT
export CI=true
eg="$build/evalgraph"

gen() {  # $1 records -> $work/data.jsonl
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":%d,\"text\":\"record number %d with some words to carry along\"}\n", i, i }' > "$work/data.jsonl"
}
cat > "$work/len.py" <<'PY'
import evalgraph

@evalgraph.node(outputs={"n": int})
def length(text: str):
    return {"n": len(text)}
PY
for kind in passthrough python; do
  if [ $kind = passthrough ]; then node="    uses: test.passthrough"; else node="    uses: python
    with: {file: len.py, function: length}"; fi
  cat > "$work/$kind.yaml" <<YAML
name: $kind
dataset: {path: data.jsonl}
nodes:
  - id: c
$node
sinks:
  - uses: sink.jsonl
    with: {file: out.jsonl}
output: {dir: out}
YAML
done

timed() {  # $1 pipeline $2 jobs -> "seconds rss_mb"
  rm -rf "$work/out"
  sync
  local s e
  s=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$work/rss" "$eg" run -q --no-report -j "$2" --plugin-dir "$build/tests/engine/plugins" "$work/$1" >/dev/null
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" -v r="$(cat "$work/rss")" 'BEGIN { printf "%.3f %.1f", e - s, r / 1024 }'
}

echo "== 1. a trivial check (len of a field): python node vs the C++ pass-through node"
printf "%-8s %-5s %10s %10s %8s %12s %12s\n" records jobs "C++ s" "python s" ratio "C++ RSS MB" "py RSS MB"
declare -A rss_py
for n in 10000 100000; do
  gen "$n"
  for j in 1 2; do
    read -r ts tr <<<"$(timed passthrough.yaml "$j")"
    read -r ps pr <<<"$(timed python.yaml "$j")"
    lines=$(wc -l < "$work"/out/python__*/out.jsonl)
    [ "$lines" -eq "$n" ] || { echo "python_bench: expected $n records, got $lines" >&2; exit 1; }
    rss_py[$n.$j]=$pr
    [ "$n" = 100000 ] && [ "$j" = 1 ] && { cxx_100k=$ts; py_100k=$ps; }
    awk -v n="$n" -v j="$j" -v ts="$ts" -v ps="$ps" -v tr="$tr" -v pr="$pr" \
      'BEGIN { printf "%-8d %-5d %10.3f %10.3f %7.2fx %12.1f %12.1f\n", n, j, ts, ps, ps / ts, tr, pr }'
  done
done
for j in 1 2; do
  awk -v a="${rss_py[10000.$j]}" -v b="${rss_py[100000.$j]}" -v j="$j" \
    'BEGIN { printf "python node peak RSS, -j %d: 10k %.1f MB, 100k %.1f MB (%+.1f %%)\n", j, a, b, (b - a) / a * 100 }'
done
per_check_us=$(awk -v a="$cxx_100k" -v b="$py_100k" 'BEGIN { printf "%.2f", (b - a) / 100000 * 1e6 }')
echo "python node's cost per check over the pass-through (-j 1, 100k): $per_check_us us"

echo
echo "== 2. 1,000 checks: promptfoo's Python assertion vs the python node (interface: promptfoo), same file"
cat > "$work/assert.py" <<'PY'
def get_assert(output, context):
    return len(output) > 10
PY
gen 1000
cat > "$work/pf.yaml" <<'YAML'
name: pf
dataset: {path: data.jsonl}
nodes:
  - id: c
    uses: python
    inputs: {output: text}
    with: {file: assert.py, function: get_assert, interface: promptfoo}
sinks:
  - uses: sink.jsonl
    with: {file: out.jsonl}
output: {dir: out}
YAML
read -r eg_pf _ <<<"$(timed pf.yaml 1)"
passes=$(grep -c '"pass":true' "$work"/out/pf__*/out.jsonl)
echo "evalgraph python node, 1,000 checks: $eg_pf s (wall, the engine's start included); $passes passed"
if [ -n "${SKIP_PROMPTFOO:-}" ]; then
  echo "promptfoo: skipped (SKIP_PROMPTFOO is set)"
elif ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "promptfoo: skipped (no npm/node on this machine; Debian: apt install npm)"
else
  pf="$work/promptfoo"
  mkdir -p "$pf"
  if ! (cd "$pf" && timeout 600 npm install --silent --no-audit --no-fund "promptfoo@${PROMPTFOO_VERSION:-0.120.0}" >"$pf/npm.log" 2>&1); then
    echo "promptfoo: skipped (npm could not install promptfoo@${PROMPTFOO_VERSION:-0.120.0}: registry unreachable? $(tail -1 "$pf/npm.log"))"
  else
    # promptfoo 0.120.0 looks for its database migrations in <package>/drizzle, npm installs them in dist/drizzle
    # ("Database migration failed: Can't find meta/_journal.json"): point the one at the other.
    pkg="$pf/node_modules/promptfoo"
    [ -e "$pkg/drizzle" ] || [ ! -d "$pkg/dist/drizzle" ] || ln -s dist/drizzle "$pkg/drizzle"
    "$py" - "$work" <<'PY'
import json, sys
w = sys.argv[1]
tests = [{"vars": {"text": json.loads(l)["text"]}} for l in open(w + "/data.jsonl")]
for name, a in (("python", {"type": "python", "value": "file://assert.py"}), ("builtin", {"type": "contains", "value": "record"})):
    cfg = {"description": "bench", "providers": ["echo"], "prompts": ["{{text}}"], "defaultTest": {"assert": [a]}, "tests": tests}
    json.dump(cfg, open(f"{w}/promptfoo-{name}.json", "w"))
PY
    declare -A pf_s
    for name in builtin python; do
      s=$(date +%s.%N)
      (cd "$work" && PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CONFIG_DIR="$pf/config" \
        PROMPTFOO_PYTHON="$py" timeout 1200 "$pf/node_modules/.bin/promptfoo" eval -c "promptfoo-$name.json" \
        --no-cache --no-table --no-write -o "$work/pf-$name.json" >"$pf/$name.log" 2>&1) || true
      e=$(date +%s.%N)
      pf_s[$name]=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", e - s }')
      ok=$("$py" -c "import json,sys; r=json.load(open(sys.argv[1]))['results']; print(r['stats']['successes'], r['stats']['failures'])" "$work/pf-$name.json" 2>/dev/null || echo "? ?")
      echo "promptfoo ${PROMPTFOO_VERSION:-0.120.0}, echo provider, 1,000 tests, $name assertion: ${pf_s[$name]} s (passed/failed: $ok)"
    done
    awk -v p="${pf_s[python]}" -v b="${pf_s[builtin]}" -v e="$eg_pf" -v c="$per_check_us" 'BEGIN {
      printf "wall, 1,000 checks: promptfoo %.2f s / evalgraph %.3f s = %.0fx\n", p, e, p / e
      pc = (p - b) / 1000 * 1e6
      printf "per Python check: promptfoo %.0f us (python - builtin assertion) / evalgraph %.2f us (python node - C++ node) = %.0fx\n", pc, c, (c > 0 ? pc / c : 0) }'
  fi
fi

echo
echo "== 3. a Python judge: 1,000 records x evalgraph.chat, loopback server at 100 ms, max_in_flight 64"
start_test_server "$build/eg-test-llm-server" "$work" --latency-ms 100 --threads 4 --reply "yes"
stats_url="${url%/v1}/_stats"
gen 1000
cat > "$work/judge.py" <<'PY'
import evalgraph

@evalgraph.node(outputs={"good": bool}, calls_llm=True)
def judge(text: str):
    return {"good": evalgraph.chat(provider="judge", prompt="Is this good? " + text, max_tokens=2).startswith("yes")}
PY
cat > "$work/judge.yaml" <<YAML
name: judge
dataset: {path: data.jsonl}
providers:
  judge:
    base_url: $url
    model: m
    max_in_flight: 64
nodes:
  - id: j
    uses: python
    with: {file: judge.py, function: judge}
sinks:
  - uses: sink.jsonl
    with: {file: out.jsonl}
output: {dir: out}
YAML
requests() { "$py" -c "import json,sys,urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1]))['requests'])" "$stats_url"; }
for pass in first cached; do
  before=$(requests)
  rm -rf "$work/out"
  s=$(date +%s.%N)
  "$eg" run -q --no-report --cache "$work/cache.sqlite" "$work/judge.yaml" >/dev/null
  e=$(date +%s.%N)
  after=$(requests)
  good=$(grep -c '"good":true' "$work"/out/judge__*/out.jsonl)
  awk -v s="$s" -v e="$e" -v r=$((after - before)) -v g="$good" -v p="$pass" 'BEGIN {
    t = e - s; b = 1000 * 0.1 / 64
    printf "%-7s run: %.2f s wall, N*L/C = %.4f s, ratio %.2f; %d requests sent; %d judged good\n", p, t, b, t / b, r, g }'
done
