#!/usr/bin/env bash
# Fuzzing bench: every fuzz target (tests/fuzz/fuzz_*.cpp) for N seconds each on its seed corpus, one after
# the other, and a table of executions per second per target (plus the corpus it grew and its peak memory).
# Exit status 0 when every target ran clean; findings are kept as in tests/fuzz/run.sh.
#   bench/fuzz.sh [SECONDS]              (default 600: the issue's "10 minutes each", 90 minutes in all)
# Environment: BUILD_DIR (default <repo>/build-asan, configured and built here with clang, address+undefined
# and -DEVALGRAPH_FUZZ=ON: the build .ci/sanitize uses), FUZZ_JOBS (targets at a time, default 1 so that the
# rates are those of one core), FUZZ_OUT (default BUILD_DIR/fuzz-bench), EVALGRAPH_FUZZ_STRICT=1 (a library's
# exception text reaching the caller counts as a finding too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-asan}"
SECONDS_EACH="${1:-600}"

echo "== building the fuzz targets in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DEVALGRAPH_SANITIZE=address,undefined -DEVALGRAPH_FUZZ=ON >/dev/null
cmake --build "$BUILD" -j2 --target fuzz >/dev/null
echo "== $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), $(date -u +%Y-%m-%d), ${SECONDS_EACH} s per target, FUZZ_JOBS=${FUZZ_JOBS:-1}"
FUZZ_OUT="${FUZZ_OUT:-$BUILD/fuzz-bench}" FUZZ_JOBS="${FUZZ_JOBS:-1}" exec "$ROOT/tests/fuzz/run.sh" "$BUILD" "$SECONDS_EACH"
