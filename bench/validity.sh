#!/usr/bin/env bash
# How well the operators agree with people: runs ksodi.o0 (default alignment, and the seed-literal TF-IDF cosine
# for comparison) over the human-labelled FaithDial units and prints AUROC (faithful vs hallucinated) with a 95 %
# bootstrap interval for O0 and each component, the K-Precision baseline and a trap score, plus units/s.
#   bash bench/validity.sh [build-dir] [validation-dir]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" 2>/dev/null && pwd || echo "${1:-$repo/build}")
data=$(cd "${2:-$repo/../shared/validation/faithdial}" && pwd)
[ -f "$data/units.jsonl" ] || { echo "validity: no $data/units.jsonl (pass the validation folder)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "validity: python3 is needed for the statistics (apt-get install python3)" >&2; exit 2; }
if [ ! -x "$build/evalgraph" ] || [ ! -f "$build/plugins/ksodi_o0.so" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target evalgraph ksodi_o0 sink_jsonl >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/p.yaml" <<YAML
name: validity
dataset: {path: $data/units.jsonl, format: jsonl}
nodes:
  - {id: o0, uses: ksodi.o0, inputs: {answer: assistant_text}}
  - {id: o0_cosine, uses: ksodi.o0, inputs: {answer: assistant_text}, with: {alignment: cosine}}
sinks:
  - uses: sink.jsonl
    with: {file: detailed.jsonl}
output: {dir: $work/out}
YAML
# The default measure alone, timed (units/s of the O0 node as shipped).
sed '/o0_cosine/d' "$work/p.yaml" > "$work/timed.yaml"
sed -i "s#$work/out#$work/timed_out#" "$work/timed.yaml"
start=$EPOCHREALTIME
"$build/evalgraph" run -q --no-journal --no-report "$work/timed.yaml" >/dev/null
secs=$(python3 -c "print($EPOCHREALTIME - $start)")
"$build/evalgraph" run -q --no-journal --no-report "$work/p.yaml" >/dev/null
detailed=$(ls "$work"/out/*/detailed.jsonl)
python3 "$repo/bench/validity_stats.py" "$detailed" --seconds "$secs"
if [ "${CALIBRATE:-0}" = 1 ]; then python3 "$repo/bench/o0_calibrate.py" "$detailed"; fi
