#!/usr/bin/env bash
# The rate controller in simulated time (tests/llm/rate_sim.h): servers that do not queue (constant and heavy-tailed
# latency) against fixed windows, servers of small capacity that queue, capacities 2-64 at latencies of 30 ms to 1 s,
# and a capacity that drops mid-run and comes back; several seeds, no machine noise, ~1 s.
# Judge a change of lib/llm/rate_controller.cpp here first, then on the loopback (bench/ratelimit_bench.sh,
# bench/pipeline_bench.sh). `--trace SIGMA CEILING` prints one run's window changes.
#   bench/rate_sim.sh [--seeds N] [--trace SIGMA CEILING]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-llm-bench}"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD" eg-rate-sim >/dev/null
exec "$BUILD/eg-rate-sim" "$@"
