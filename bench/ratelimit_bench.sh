#!/usr/bin/env bash
# Rate limits, queues and cut limits (issue #39): the LLM client against the loopback server's provider-like limits
# (tests/llm/server/provider_limits.h), every case with three clients side by side in one run: the default provider
# settings (adaptive window, ceiling 256), the old fixed default window (adaptive: false, max_in_flight: 8) and a
# fixed window of 64. Cases, at 100 ms latency, each ~20-30 s for the default client:
#   (a) token buckets: 3000 requests/min and 120k tokens/min (2 s burst), 429 + OpenAI x-ratelimit-* headers
#   (b) the same with 429 + retry-after only
#   (c) a server of capacity 24 that queues beyond it, never refusing (--capacity K: another K, calls scaled to it)
#   (d) (a) with its limits halved from 8 s to 16 s, then back
# Prints per run: throughput against what the limits allow (buckets' burst included), the 429 share, the median
# latency against the unloaded one, the concurrency (median/max) and what held it; for (d) how soon the throughput
# was back above 90 % of the restored limit and the 429 share in the 10 s after the cut. Targets for the default
# client (a "meets"/"misses" on its line): (a), (b) >= 90 % of the limit, 429s <= 2 % (a) / 10 % (b); (c) >= 90 %
# of K/L and median latency <= 1.3x unloaded; (d) back within 10 s, <= 5 % 429s after the cut.
#   bench/ratelimit_bench.sh [--cases abcd] [--clients adaptive,fixed8,fixed64] [--scale F] [--capacity K] [--json FILE]
# Exit status 0 when the default client meets every target. Environment: BUILD_DIR (default <repo>/build-llm-bench).
# Runtime: about 5 minutes for everything (the fixed windows are cut at 60 s a run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-llm-bench}"
echo "== building (Release) in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD" eg-ratelimit-bench >/dev/null
echo "== $(nproc) cores; server in-process (2 threads)"
exec "$BUILD/eg-ratelimit-bench" "$@"
