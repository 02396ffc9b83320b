#!/usr/bin/env bash
# Runs the fuzz targets of a build (-DEVALGRAPH_FUZZ=ON) for a while each, on a copy of their seed corpus, and
# prints executions per second per target. Exit 1 on any finding (crash, leak, timeout, out of memory, a
# broken invariant); the input is kept under OUT/artifacts/ and the report under OUT/logs/.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET...]        TARGET: pipeline, jsonl, ... (default: all built)
#
# Environment: FUZZ_JOBS=N   targets run N at a time (default 1; CI uses 2 on its 2 cores)
#              FUZZ_OUT=DIR  where corpora, logs and artifacts go (default BUILD_DIR/fuzz-out, emptied first)
#              EVALGRAPH_FUZZ_STRICT=1  a library's exception reaching the caller is a finding too
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}
secs=${2:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
build=$(cd "$build" && pwd)
out=${FUZZ_OUT:-$build/fuzz-out}
jobs=${FUZZ_JOBS:-1}

# Longest input per target (bytes): room for every seed and for hostile structure, small enough that one
# input stays fast. Deep nesting beyond what fits here is the readers' depth limits' business (issue #15).
declare -A max_len=([pipeline]=8192 [jsonl]=8192 [csv]=4096 [xlsx]=8192 [llm_response]=4096 [judge_verdict]=4096
                    [sdk_input]=4096 [json_scan]=4096 [plugin_params]=2048 [config_dir]=8192 [otlp]=8192)

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$here"/fuzz_*.cpp; do n=$(basename "$f" .cpp); targets+=("${n#fuzz_}"); done
fi
for t in "${targets[@]}"; do
  [ -x "$build/fuzz_$t" ] || { echo "run.sh: $build/fuzz_$t is not built (configure with -DEVALGRAPH_FUZZ=ON)" >&2; exit 2; }
done

# Leaks inside libraries we call, not ours (fontconfig's caches): the suppressions CI uses.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/../../.ci/lsan.supp:print_suppressions=0}
rm -rf "$out" && mkdir -p "$out/logs" "$out/artifacts" "$out/corpus"

run_one() {
  local t=$1 corpus="$out/corpus/$1" log="$out/logs/$1.log"
  mkdir -p "$corpus"
  local seeds=()
  [ -d "$here/corpus/$t" ] && seeds=("$here/corpus/$t")
  # -timeout: one input; -rss_limit_mb: the issue's 2 GB; new inputs go to $corpus, the seeds stay as they are.
  "$build/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=20 \
    -max_len="${max_len[$t]:-4096}" -print_final_stats=1 -close_fd_mask=1 \
    -artifact_prefix="$out/artifacts/$t-" "$corpus" "${seeds[@]}" >"$log" 2>&1
  echo $? >"$out/logs/$t.rc"
}

start=$(date +%s)
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

status=0
printf '%-14s %8s %12s %10s %8s %8s  %s\n' target seconds executions exec/s corpus rss_mb result
for t in "${targets[@]}"; do
  log="$out/logs/$t.log"
  rc=$(cat "$out/logs/$t.rc" 2>/dev/null || echo 99)
  stat() { grep -m1 "^stat::$1:" "$log" | awk '{print $2}'; }
  runs=$(stat number_of_executed_units) eps=$(stat average_exec_per_sec) rss=$(stat peak_rss_mb)
  corpus=$(find "$out/corpus/$t" -type f | wc -l)
  result=ok
  if [ "$rc" != 0 ]; then
    result="FINDING (exit $rc)"
    status=1
  fi
  printf '%-14s %8s %12s %10s %8s %8s  %s\n' "$t" "$secs" "${runs:--}" "${eps:--}" "$corpus" "${rss:--}" "$result"
done
if [ "$status" != 0 ]; then
  for t in "${targets[@]}"; do
    [ "$(cat "$out/logs/$t.rc")" = 0 ] && continue
    echo
    echo "==== fuzz_$t: $(ls "$out/artifacts/$t-"* 2>/dev/null | tr '\n' ' ')"
    grep -v '^#[0-9]' "$out/logs/$t.log" | tail -n 60
  done
  echo
  echo "reproduce: $build/fuzz_<target> <artifact>; minimise: $build/fuzz_<target> -minimize_crash=1 -runs=10000 <artifact>"
fi
echo "fuzzing took $(( $(date +%s) - start )) s (logs: $out/logs)"
exit $status
