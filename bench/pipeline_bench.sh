#!/usr/bin/env bash
# Pipeline benchmark: LLM pipelines through the CLI with default flags against the loopback test server, at
# constant latency and at heavy-tailed (log-normal, sigma 1, same mean, seeded) latency. For each case it
# prints wall time, the ratio to the physical limit N*k*L/C (N records, k LLM calls per record, L mean latency,
# C the provider's max_in_flight), CPU ms per LLM call (evalgraph's user+sys over the calls) and peak RSS.
#   (a) completion (transform.llm) -> judge (judge.task_comparison), 1,000 records      k = 2
#   (b) three LLM nodes in a chain (transform.llm -> transform.llm -> judge), 1,000     k = 3
#   (c) one LLM node beside the local KSODI operators S0, K0, O0, 1,000 records         k = 1
#   (d) (a) with 10,000 records
# For each run it also prints what that run's latency draws allow (bench/schedule_bound.py over the server's
# request log): bound_s, a lower bound for any scheduler that knew every latency in advance, and sched_s, the
# engine's own scheduling policy simulated with zero overhead; wall/sched is then the engine's own overhead.
# At sigma 0 both equal the limit; at sigma 1 on 1,000 records they lie above it, since the slowest calls
# decide the end (SEEDS="1 2 3 ..." repeats the heavy-tailed runs over several draws).
# Exit status non-zero when a run failed, a call failed or a record had a failure.
#   bash bench/pipeline_bench.sh [build-dir]
# Environment: EVALGRAPH (an evalgraph binary to measure instead of <build>/evalgraph, e.g. an older build;
# its plugins come from the folder beside it), LATENCY_MS (100), IN_FLIGHT (64), SIGMAS ("0 1"),
# CASES ("a b c d"), N (1000), N_LARGE (10000), SEED (13: the server's latency draws), FLAGS (extra evalgraph
# flags, for experiments; the figures are taken without), SEEDS (the seeds of the sigma > 0 runs; default SEED),
# LOG_DIR (keeps each run's request log there, for bench/schedule_bound.py), WRAP (a command evalgraph runs
# under, for profiling, e.g. "perf record -g -o /tmp/perf.data --"; the figures then include it).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build-pipeline-bench}
LATENCY_MS=${LATENCY_MS:-100} IN_FLIGHT=${IN_FLIGHT:-64} SIGMAS=${SIGMAS:-"0 1"} CASES=${CASES:-"a b c d"}
N=${N:-1000} N_LARGE=${N_LARGE:-10000} SEED=${SEED:-13} FLAGS=${FLAGS:-}
SEEDS=${SEEDS:-$SEED} LOG_DIR=${LOG_DIR:-} WRAP=${WRAP:-}
command -v /usr/bin/time >/dev/null || { apt-get install -y -qq time >/dev/null 2>&1 || true; }
echo "== building (Release) in $build"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target evalgraph eg-test-llm-server transform_llm judge_task_comparison ksodi_s0 ksodi_k0 \
  ksodi_o0 sink_jsonl sink_csv sink_html_report >/dev/null
exe=${EVALGRAPH:-$build/evalgraph}

work=$(mktemp -d)
# shellcheck source=bench/test_server.sh
. "$repo/bench/test_server.sh"
cleanup() {
  stop_test_server
  rm -rf "$work"
}
trap cleanup EXIT

start_server() {  # $1 sigma $2 seed; the server is its own process, so the CPU measured is evalgraph's alone.
  rm -f "$work/requests.jsonl"
  start_test_server "$build/eg-test-llm-server" "$work" --latency-ms "$LATENCY_MS" --latency-sigma "$1" --seed "$2" \
    --threads 2 --reply "{last_user}" --request-log "$work/requests.jsonl"
}

gen() {  # $1 records: a question each, plus a small KSODI unit for (c)
  awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"r%d\",\"question\":\"Question %d: how do I cancel my contract %d?\",\"context_scope_id\":\"bench\",\"system_prompt\":\"Answer from the documents.\",\"tool_profile\":\"kb_search(query)\",\"user_text\":\"How do I cancel contract %d?\",\"retrieved_docs\":[{\"id\":\"d%d\",\"text\":\"Contracts can be cancelled online with a notice period of one month.\"}],\"assistant_text\":\"You can cancel contract %d online; the notice period is one month [1].\"}\n", i, i, i, i, i, i }' \
    >"$work/data-$1.jsonl"
}

head_yaml() {  # $1 name $2 records
  cat <<YAML
name: $1
dataset: {path: data-$2.jsonl}
providers:
  llm: {base_url: "$url", model: bench, max_in_flight: $IN_FLIGHT}
YAML
}
complete='{id: t1, uses: transform.llm, inputs: {original: question}, with: {user_prompt: "Rewrite: {text}"}}'
judge() { echo "{id: j, uses: judge.task_comparison, inputs: {original: question, transformed: $1}, with: {criterion: \"The text is polite.\"}}"; }
tail_yaml='sinks:
  - {uses: sink.jsonl, with: {file: detailed.jsonl}}
output: {dir: out}'

write_pipeline() {  # $1 case $2 records -> prints k
  local f="$work/$1.yaml"
  {
    head_yaml "bench-$1" "$2"
    echo "nodes:"
    case $1 in
      a | d) echo "  - $complete"; echo "  - $(judge t1.text)" ;;
      b) echo "  - $complete"
         echo '  - {id: t2, uses: transform.llm, inputs: {original: t1.text}, with: {user_prompt: "Shorten: {text}"}}'
         echo "  - $(judge t2.text)" ;;
      c) echo "  - $complete"
         echo '  - {id: s0, uses: ksodi.s0, inputs: {answer: assistant_text}}'
         echo '  - {id: k0, uses: ksodi.k0}'
         echo '  - {id: o0, uses: ksodi.o0, inputs: {answer: assistant_text}}' ;;
    esac
    echo "$tail_yaml"
  } >"$f"
  case $1 in a | d) echo 2 ;; b) echo 3 ;; c) echo 1 ;; esac
}

status=0
printf "%-4s %-6s %5s %7s %6s %8s %8s %8s %7s %6s %6s %11s %7s %6s\n" case sigma seed records calls limit_s \
  bound_s sched_s wall_s ratio w/sch cpu_ms/call rss_MB failed
for sigma in $SIGMAS; do
  seeds=$SEEDS
  [ "$sigma" = 0 ] && seeds=$SEED  # constant latency: every seed draws the same
  for seed in $seeds; do
    for c in $CASES; do
      n=$N
      [ "$c" = d ] && n=$N_LARGE
      [ -f "$work/data-$n.jsonl" ] || gen "$n"
      start_server "$sigma" "$seed"  # one server per run: its request log holds this run's calls alone
      k=$(write_pipeline "$c" "$n")
      rm -rf "$work/out" "$work/xdg"
      # A cold response cache of its own (XDG_CACHE_HOME), otherwise the defaults.
      rc=0
      XDG_CACHE_HOME="$work/xdg" /usr/bin/time -f "%e %U %S %M" -o "$work/time" \
        $WRAP "$exe" run $FLAGS "$work/$c.yaml" >"$work/run.out" 2>"$work/run.err" || rc=$?
      stop_test_server  # writes the request log
      [ -n "$LOG_DIR" ] && cp "$work/requests.jsonl" "$LOG_DIR/requests-$c-sigma$sigma-seed$seed.jsonl"
      read -r wall user sys rss <"$work/time"
      runjson=$(ls "$work"/out/*/run.json 2>/dev/null | head -1 || true)
      failed="?"
      calls=0
      chunk=256 window=$((1 << 40))
      if [ -n "$runjson" ]; then
        read -r failed calls chunk window < <(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); \
          l = r.get("llm", {}).get("llm", {}); s = r.get("schedule", {}); \
          print(r["failed_records"] + l.get("errors", 0), l.get("calls", 0), s.get("chunk_size", 256), s.get("window", 1 << 40))' \
          "$runjson")
      fi
      read -r bound sched < <(python3 "$repo/bench/schedule_bound.py" "$work/requests.jsonl" "$IN_FLIGHT" "$chunk" "$window" \
        || echo "0 0")
      if [ "$rc" -ne 0 ] || [ "$failed" != 0 ] || [ "$calls" -ne $((n * k)) ]; then
        status=1
        echo "case $c sigma $sigma seed $seed: exit $rc, $failed failed, $calls of $((n * k)) calls" >&2
        tail -5 "$work/run.err" >&2
      fi
      awk -v c="$c" -v s="$sigma" -v seed="$seed" -v n="$n" -v k="$k" -v L="$LATENCY_MS" -v C="$IN_FLIGHT" -v w="$wall" \
        -v u="$user" -v sy="$sys" -v rss="$rss" -v f="$failed" -v b="$bound" -v sc="$sched" 'BEGIN {
          lim = n * k * L / 1000 / C;
          printf "%-4s %-6s %5s %7d %6d %8.3f %8.3f %8.3f %7.2f %6.2f %6.2f %11.3f %7.1f %6s\n", c, s, seed, n, n * k, lim, b, sc,
            w, w / lim, (sc > 0 ? w / sc : 0), (u + sy) * 1000 / (n * k), rss / 1024, f }'
    done
  done
done
exit $status
