#!/usr/bin/env bash
# `evalgraph agree` at scale (docs/agreement.md; #36's target: 1,000,000 records, four entries — one of each type
# pair — labels for all: <= 5 s and <= 500 MB): builds a finished run folder of N synthetic records (a judge's
# verdict, a 1-5 quality, a score) and a labels file for all of them, then times `evalgraph agree` on it and prints
# wall seconds, records per second and peak RSS.
#   bash bench/agreement_bench.sh BUILD_DIR [N]      (default N = 1000000)
set -euo pipefail
build=$(cd "${1:?usage: agreement_bench.sh BUILD_DIR [N]}" && pwd)
n=${2:-1000000}
work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
run=$work/run
mkdir -p "$run"
/usr/bin/python3 - "$run" "$work/labels.jsonl" "$n" <<'PY'
import json, random, sys
run, labels, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(1)
with open(run + "/detailed.jsonl", "w") as d, open(labels, "w") as l:
    for i in range(n):
        truth = rng.random() < 0.4
        q = min(5, max(1, round(3 + (1.2 if truth else -1.2) + rng.gauss(0, 1))))
        score = min(1.0, max(0.0, (0.65 if truth else 0.35) + rng.gauss(0, 0.2)))
        verdict = (score > 0.5) != (rng.random() < 0.1)
        d.write('{"id":"u%d","question":"q","answer":"a","judge":{"verdict":%s,"quality":%d,"score":%.6f}}\n'
                % (i, "true" if verdict else "false", q, score))
        lq = min(5, max(1, q + rng.choice((-1, 0, 0, 0, 1))))
        l.write('{"id":"u%d","faithful":%s,"quality":%d,"rating":%.4f}\n'
                % (i, "true" if truth else "false", lq, score * 10 + rng.gauss(0, 1)))
PY
cat >"$run/pipeline.yaml" <<YAML
name: agreement-bench
dataset: {path: $work/data.jsonl}
labels:
  path: $work/labels.jsonl
  key: id
  fields:
    faithful: {type: binary}
    quality: {type: ordinal, values: [1, 2, 3, 4, 5]}
    rating: {type: number}
nodes:
  - {id: judge, uses: test.none}
agreement:
  - {metric: judge.verdict, label: faithful}
  - {metric: judge.quality, label: quality}
  - {metric: judge.score, label: faithful}
  - {metric: judge.score, label: rating}
YAML
printf '{"pipeline":"agreement-bench","pipeline_file":"%s","records_file":"detailed.jsonl","sinks":{}}\n' "$run/pipeline.yaml" >"$run/run.json"
mb=$(du -m "$run/detailed.jsonl" | cut -f1)
[ -n "${KEEP:-}" ] && echo "kept $work" >&2
/usr/bin/time -f "%e %M %U %S" -o "$work/time" "$build/evalgraph" agree --json "$run" >"$work/out.json"
read -r secs kb usr sys <"$work/time"
/usr/bin/python3 - "$work/out.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["agreement"]
for e in a["entries"]:
    head = e["headline"]
    s = e["stats"][head]
    print(f"  {e['name']:<24} {e['kind']:<16} n={e['n']:<8} {head} {s.get('value', float('nan')):.4f} [{s.get('low', 0):.4f}, {s.get('high', 0):.4f}]")
PY
echo "evalgraph agree: $n records ($mb MB of records + labels for all), 4 entries: ${secs} s, $(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.0f", n/s}') records/s, peak RSS $((kb / 1024)) MB (CPU: ${usr} s user + ${sys} s system; load average $(cut -d" " -f1 /proc/loadavg))"
