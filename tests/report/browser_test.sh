#!/usr/bin/env bash
# Opens report.html of the shipped KSODI sample run and a compare.html in headless Chromium, lets their
# scripts run, and checks the rendered DOM: every record id shows up in the (lazily rendered) table, sorting
# and search work, a record's drill-down shows its O0 sentences, the LLM usage (none here; per provider in a
# run against the loopback test server), and nothing was logged to the console.
# usage: browser_test.sh EVALGRAPH_EXE REPO_DIR WORK_DIR      (exit 77 = skipped: no chromium)
set -uo pipefail
exe=$1 repo=$2 work=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then echo "SKIP: no chromium (Debian: apt-get install chromium)"; exit 77; fi
rm -rf "$work" && mkdir -p "$work"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

dump() {  # dump URL OUT ERR: the DOM after the page's scripts ran
  timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --user-data-dir="$work/profile" --virtual-time-budget=15000 --enable-logging=stderr --v=0 --dump-dom "$1" >"$2" 2>"$3"
}

run_a=$(CI=true "$exe" run -q "$repo/pipelines/ksodi-standard.yaml" -o "$work/runs") || { echo "FAIL run A"; exit 1; }
sed -e "s#path: data/#path: $repo/pipelines/data/#" -e 's/alpha: 0.4, beta: 0.4/alpha: 0.5, beta: 0.4/' \
  "$repo/pipelines/ksodi-standard.yaml" >"$work/changed.yaml"
run_b=$(CI=true "$exe" run -q "$work/changed.yaml" -o "$work/runs") || { echo "FAIL run B"; exit 1; }

dump "file://$run_a/report.html#selftest" "$work/report.dom" "$work/report.err"
st=$(grep -o '<pre id="eg-selftest">.*</pre>' "$work/report.dom")
check "report: the page ran its self-test" '[ -n "$st" ]'
check "report: no script errors" 'grep -q "\"errors\":\[\]" <<<"$st"'
check "report: no console messages" '! grep -q ":CONSOLE" "$work/report.err"'
missing=0
for id in $(grep -o '^{"id":"[^"]*"' "$run_a/detailed.jsonl" | cut -d'"' -f4); do
  grep -q "\"$id\"" <<<"$st" || { echo "  id $id never rendered"; missing=$((missing + 1)); }
done
n=$(wc -l <"$run_a/detailed.jsonl")
check "report: all $n record ids rendered in the table ($missing missing)" '[ "$missing" -eq 0 ] && grep -q "\"records\":$n," <<<"$st"'
check "report: sorted descending by a column" 'grep -q "\"sorted_desc\":true" <<<"$st"'
check "report: search for one id finds one record" 'grep -q "\"search_hits\":1," <<<"$st"'
check "report: drill-down shows the O0 sentences" 'grep -Eq "\"drill_sentences\":[1-9]" <<<"$st" && grep -q "class=\"sent " "$work/report.dom"'
check "report: drill-down shows s0, k0 and o0" 'grep -q "\"drill_nodes\":\[\"s0\",\"k0\",\"o0\"\]" <<<"$st"'
check "report: K0 dimensions and S0 expectations rendered" 'grep -q "class=\"dim " "$work/report.dom" && grep -q "Format expectations" "$work/report.dom"'
check "report: Fleiss' kappa of the worked example is 0.210" 'grep -q "\"kappa_example\":\"0.210\"" <<<"$st"'
check "report: histograms (SVG) and the pipeline graph" 'grep -q "class=\"hist\"" "$work/report.dom" && grep -q "id=\"dag\"" "$work/report.dom"'
check "report: a run without LLM has no LLM providers section" '! grep -q "id=\"llm-providers\"" "$work/report.dom"'
check "report: a run without LLM says so under LLM usage" 'grep -q "<h3>LLM usage</h3><p class=\"muted\" id=\"llm-usage\">no LLM calls</p>" "$work/report.dom"'
# A report without the eg-final element (written by an engine before plugin ABI 1.1) still works.
sed '/<script type="application\/json" id="eg-final">/d' "$run_a/report.html" >"$work/old-report.html"
dump "file://$work/old-report.html#selftest" "$work/old.dom" "$work/old.err"
check "report without eg-final: renders, says no LLM usage was recorded, no errors" 'grep -q "id=\"llm-usage\">no LLM calls recorded" "$work/old.dom" && grep -q "\"records\":64," "$work/old.dom" && grep -q "\"errors\":\[\]" "$work/old.dom" && ! grep -q ":CONSOLE" "$work/old.err"'

# A run with an LLM node against the loopback test server: the LLM usage table, one row per provider.
server=$(dirname "$exe")/eg-test-llm-server  # executables are built next to evalgraph
check "the loopback LLM test server is built ($server)" '[ -x "$server" ]'
if [ -x "$server" ]; then
  # answers take 500 ms, so the repeated question is still in flight when it is asked again (shared, not re-sent)
  "$server" --reply "an answer" --latency-ms 500 >"$work/server.out" 2>"$work/server.err" &
  server_pid=$!
  for _ in $(seq 100); do grep -q "^listening on " "$work/server.out" && break; sleep 0.05; done
  url=$(sed -n 's/^listening on //p' "$work/server.out")
  printf 'original\none\ntwo\nthree\none\n' >"$work/llm.csv"
  printf 'name: llm\ndataset: {path: llm.csv}\nproviders:\n  judge:\n    base_url: %s\n    model: m\nnodes:\n  - {id: t, uses: transform.llm}\nsinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n' "$url" >"$work/llm.yaml"
  run_l=$(CI=true "$exe" run -q -j 1 --no-cache "$work/llm.yaml" -o "$work/runs")
  # 20 calls of 500 ms, 4 at once: 2.5 s, so the provider's timeline (a point every 0.5 s) has rows to draw
  seq 1 20 | sed '1i original' >"$work/rate.csv"
  sed -e 's/llm.csv/rate.csv/' -e 's/    model: m/    model: m\n    max_in_flight: 4/' "$work/llm.yaml" >"$work/rate.yaml"
  run_r=$(CI=true "$exe" run -q --no-cache "$work/rate.yaml" -o "$work/runs")
  kill "$server_pid"; wait "$server_pid" 2>/dev/null
  dump "file://$run_l/report.html#selftest" "$work/llm.dom" "$work/llm.err"
  check "LLM run: the usage table has the provider with its 4 calls and 3 HTTP requests" 'grep -q "<tr data-provider=\"judge\"><td><b>judge</b></td><td class=\"n\" data-k=\"calls\">4</td><td class=\"n\" data-k=\"http_requests\">3</td>" "$work/llm.dom"'
  check "LLM run: token columns and no script errors" 'grep -q "data-k=\"prompt_tokens\">[1-9]" "$work/llm.dom" && grep -q "\"errors\":\[\]" "$work/llm.dom" && ! grep -q ":CONSOLE" "$work/llm.err"'
  dump "file://$run_r/report.html#selftest" "$work/rate.dom" "$work/rate.err"
  check "LLM run: the LLM providers section with the provider's concurrency (max 4) in its table" 'grep -q "<tr data-provider=\"judge\"><td><b>judge</b></td><td data-k=\"concurrency\">[0-4] / [0-4] / 4</td><td>adaptive, ceiling 4</td>" "$work/rate.dom"'
  check "LLM run: two charts (concurrency, answers per second) with their titles, drawn without errors" 'grep -q "aria-labelledby=\"llm-c0-t llm-c0-d\"><title id=\"llm-c0-t\">Calls in flight and window of judge over the run</title>" "$work/rate.dom" && grep -q "aria-labelledby=\"llm-r0-t llm-r0-d\"><title id=\"llm-r0-t\">Answers per second from judge over the run</title><desc id=\"llm-r0-d\">20 answers in " "$work/rate.dom" && grep -q "<polyline class=\"inflight\" points=\"[0-9]" "$work/rate.dom" && grep -q "<rect class=\"tp\" x=\"[0-9]" "$work/rate.dom" && grep -q "\"errors\":\[\]" "$work/rate.dom" && ! grep -q ":CONSOLE" "$work/rate.err"'
fi

# A run with a failed and a skipped node, and a run without records.
printf '{"id":"a","text":"hello"}\n{"id":"b"}\n{"id":"c","text":"x"}\n' >"$work/fx.jsonl"
printf 'name: fx\ndataset: {path: fx.jsonl}\nnodes:\n  - {id: up, uses: test.upper}\n  - {id: cat, uses: test.concat, inputs: {a: up.upper, b: text}}\nsinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n' >"$work/fx.yaml"
plugins=$(dirname "$exe")/tests/engine/plugins
if [ -d "$plugins" ]; then
  run_f=$(CI=true "$exe" run -q --plugin-dir "$plugins" "$work/fx.yaml" -o "$work/runs")
  dump "file://$run_f/report.html#selftest" "$work/fx.dom" "$work/fx.err"
  check "failed record: marked in the table and counted with its first error" 'grep -q "<tr data-i=\"1\" class=\"failed\">" "$work/fx.dom" && grep -q "has no value for field" "$work/fx.dom" && grep -q "\"errors\":\[\]" "$work/fx.dom"'
  check "failed record: no console messages" '! grep -q ":CONSOLE" "$work/fx.err"'
fi
: >"$work/empty.jsonl"
printf 'name: empty\ndataset: {path: empty.jsonl, format: jsonl}\nsinks:\n  - uses: sink.jsonl\n    with: {file: detailed.jsonl}\n' >"$work/empty.yaml"
run_e=$(CI=true "$exe" run -q "$work/empty.yaml" -o "$work/runs")
dump "file://$run_e/report.html#selftest" "$work/empty.dom" "$work/empty.err"
check "empty run: the page renders without errors" 'grep -q "\"records\":0," "$work/empty.dom" && ! grep -q ":CONSOLE" "$work/empty.err"'

"$exe" compare "$run_a" "$run_b" -o "$work/cmp" >"$work/compare.txt" 2>&1 || { echo "FAIL compare"; cat "$work/compare.txt"; exit 1; }
dump "file://$work/cmp/compare.html" "$work/compare.dom" "$work/compare.err"
check "compare: 64 pairs" 'grep -q "id=\"n-paired\">64<" "$work/compare.dom"'
check "compare: the changed parameter is listed" 'grep -q "/nodes/s0/with/alpha" "$work/compare.dom"'
check "compare: metric rows with intervals drawn" '[ "$(grep -o "<tr class=\"metric\">" "$work/compare.dom" | wc -l)" -gt 10 ] && grep -q "<svg" "$work/compare.dom"'
check "compare: no console messages" '! grep -q ":CONSOLE" "$work/compare.err"'
[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
