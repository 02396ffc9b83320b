#!/usr/bin/env bash
# LLM client benchmark: 2,000 chat calls to the loopback test server (100 ms latency) with 64 in flight,
# then the same calls with a warm cache. Prints wall time, ratio to the physical limit N*L/C, CPU time
# per call, and the HTTP requests of the warm run (must be 0). Exit status 0 when every call succeeded
# and the warm run made no request.
#   bench/llm_bench.sh [--calls N] [--in-flight N] [--latency-ms N] [--mode batch|threads]
# Environment: BUILD_DIR (default <repo>/build-llm-bench).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-llm-bench}"
CALLS=2000 IN_FLIGHT=64 LATENCY=100 MODE=batch
while [[ $# -gt 0 ]]; do
  case "$1" in
    --calls) CALLS="$2"; shift 2 ;;
    --in-flight) IN_FLIGHT="$2"; shift 2 ;;
    --latency-ms) LATENCY="$2"; shift 2 ;;
    --mode) MODE="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

echo "== building (Release) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD" eg-test-llm-server eg-llm-bench >/dev/null

TMP="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# The server runs as its own process so that the CPU time measured is the client's alone.
"$BUILD/eg-test-llm-server" --latency-ms "$LATENCY" --threads 2 >"$TMP/server.out" 2>"$TMP/server.err" &
SERVER_PID=$!
URL=""
for _ in $(seq 100); do
  URL="$(sed -n 's/^listening on //p' "$TMP/server.out")"
  [[ -n "$URL" ]] && break
  sleep 0.05
done
[[ -n "$URL" ]] || { echo "test server did not start" >&2; cat "$TMP/server.err" >&2; exit 1; }
echo "== server $URL (latency ${LATENCY} ms); $(nproc) cores"
"$BUILD/eg-llm-bench" --url "$URL" --calls "$CALLS" --in-flight "$IN_FLIGHT" --latency-ms "$LATENCY" \
  --mode "$MODE" --cache "$TMP/llm-cache.sqlite"
