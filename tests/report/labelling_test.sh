#!/usr/bin/env bash
# Labelling in report.html, in a real headless Chromium driven by puppeteer-core (labelling_test.mjs): a run
# whose pipeline declares labels: (a Python node stands in for a judge), then in the browser: the "Agreement
# with people" section (a confusion cell lists its records, a disagreement opens its record), the annotator's
# name, labels given with keys and clicks, a seeded random order and blind review, a reload (the labels are
# still there), "Download labels" (the file's lines are checked one by one), and finally
# `evalgraph agree RUN --labels <download> --json` gives the agreement of exactly the labels given.
# usage: labelling_test.sh EVALGRAPH_EXE REPO_DIR WORK_DIR   (exit 77 = skipped: no chromium, node or npm)
# SCREENSHOT_DIR=DIR keeps screenshots of the agreement section and of the labelling view there.
set -uo pipefail
exe=$1 repo=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then echo "SKIP: no chromium (Debian: apt-get install chromium)"; exit 77; fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then echo "SKIP: no node/npm (Debian: apt-get install nodejs npm)"; exit 77; fi

# puppeteer-core, pinned, from the npm registry into a cache outside the repository (installed once).
puppeteer_version=24.43.1
npm_dir=${XDG_CACHE_HOME:-$HOME/.cache}/evalgraph-npm
if ! grep -qs "\"version\": \"$puppeteer_version\"" "$npm_dir/node_modules/puppeteer-core/package.json"; then
  mkdir -p "$npm_dir"
  if ! timeout 300 npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error "puppeteer-core@$puppeteer_version" >"$npm_dir/install.log" 2>&1; then
    echo "SKIP: cannot install puppeteer-core@$puppeteer_version from npm (offline?): $(tail -2 "$npm_dir/install.log")"
    exit 77
  fi
fi

rm -rf "$work" && mkdir -p "$work"
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# 24 records; a deterministic "judge" in Python gives a verdict, a score, a quality and a topic per answer.
for i in $(seq 1 24); do
  id=$(printf 'q%02d' "$i")
  case $((i % 4)) in
    0) a="Your refund was sent today, it takes three days." ;;
    1) a="The outage in your area is fixed since noon." ;;
    2) a="I am not sure, maybe try again later?" ;;
    3) a="Billing runs on the first of the month; your invoice $i is attached." ;;
  esac
  printf '{"id":"%s","question":"question %d","answer":"%s"}\n' "$id" "$i" "$a"
done >"$work/data.jsonl"
cat >"$work/judge.py" <<'EOF'
import evalgraph


@evalgraph.node(outputs={"verdict": bool, "score": float, "quality": int, "topic": str})
def judge(answer: str):
    """A stand-in judge: faithful when the answer states something definite."""
    low = answer.lower()
    topic = "billing" if ("refund" in low or "invoice" in low) else "outage" if "outage" in low else "other"
    score = round((len(answer) % 17) / 16.0, 4)
    return {"verdict": "not sure" not in low, "score": score, "quality": 1 + len(answer) % 5, "topic": topic}
EOF
# Labels given before: two raters for the first eight records (shown read-only in the report).
for i in $(seq 1 8); do
  id=$(printf 'q%02d' "$i")
  printf '{"id":"%s","rater":"ann1","faithful":%s,"quality":%d,"topic":"other","score":0.5}\n' "$id" "$([ $((i % 4)) -eq 2 ] && echo false || echo true)" $((1 + i % 5))
  printf '{"id":"%s","rater":"ann2","faithful":%s,"quality":%d,"topic":"billing","score":0.25}\n' "$id" "$([ $((i % 3)) -eq 0 ] && echo false || echo true)" $((1 + (i + 1) % 5))
done >"$work/labels.jsonl"
base='name: labelling
dataset: {path: data.jsonl, format: jsonl}
nodes:
  - {id: judge, uses: python, with: {file: judge.py, function: judge}}
sinks:
  - uses: sink.jsonl
    with: {file: detailed.jsonl}'
labels='labels:
  path: labels.jsonl
  key: id
  annotator: rater
  fields:
    faithful: {type: binary}
    quality: {type: ordinal, values: [1, 2, 3, 4, 5]}
    topic: {type: category, values: [billing, outage, other]}
    score: {type: number}
agreement:
  - {metric: judge.verdict, label: faithful}
  - {metric: judge.score, label: faithful}
  - {metric: judge.quality, label: quality}
  - {metric: judge.topic, label: topic}'
printf '%s\n%s\n' "$base" "$labels" >"$work/pipeline.yaml"
printf '%s\n' "$base" >"$work/plain.yaml"

if run=$(CI=true "$exe" run -q "$work/pipeline.yaml" -o "$work/runs" 2>"$work/run.err"); then
  report=$run/report.html
  echo "ok   a run with labels: declared ($run)"
elif grep -qi "label" "$work/run.err"; then
  # An engine without labels: yet: the same run without them, then its report patched to carry what such an
  # engine will write (the sink's _run.labels, each record's _labels, eg-final's agreement).
  echo "NOTE the engine does not read labels: yet ($(head -1 "$work/run.err")); patching the report by hand"
  run=$(CI=true "$exe" run -q "$work/plain.yaml" -o "$work/runs") || { echo "FAIL the run without labels"; exit 1; }
  report=$work/report.html
  node "$here/labelling_test.mjs" patch "$run/report.html" "$work/labels.jsonl" "$report" "$npm_dir" || { echo "FAIL patching the report"; exit 1; }
else
  echo "FAIL the run with labels:"; cat "$work/run.err"; exit 1
fi

mkdir -p "$work/download"
node "$here/labelling_test.mjs" browse "$report" "$work/download" "$browser" "$npm_dir" "${SCREENSHOT_DIR:-}" || fail=1
download=$work/download/labels-tester.jsonl
check "the download is there" '[ -s "$download" ]'

# The last step: the agreement of the labels just given, by `evalgraph agree` (when this evalgraph has it).
if true; then
  if "$exe" agree "$run" --labels "$download" --json >"$work/agree.json" 2>"$work/agree.err"; then
    /usr/bin/python3 - "$work/agree.json" "$download" "$run/detailed.jsonl" >"$work/agree.check" 2>&1 <<'EOF'
import json, sys
agree = json.load(open(sys.argv[1]))["agreement"]
labels = [json.loads(l) for l in open(sys.argv[2])]
verdict = {r["id"]: r["judge"]["verdict"] for r in map(json.loads, open(sys.argv[3]))}
given = {l["id"]: l["faithful"] for l in labels if "faithful" in l}
hits = sum(verdict[k] == v for k, v in given.items())
entry = next(e for e in agree["entries"] if e["metric"] == "judge.verdict" and e["label"] == "faithful")
print("n", entry["n"], "expected", len(given), "accuracy", entry["stats"]["accuracy"].get("value"), "expected", hits / len(given))
assert entry["n"] == len(given), "n"
assert abs(entry["stats"]["accuracy"]["value"] - hits / len(given)) < 1e-12, "accuracy"
annotators = agree.get("labels", {}).get("annotators")
assert annotators in (None, ["tester"]), annotators
EOF
    rc=$?
    check "evalgraph agree --labels <download>: n and accuracy of the labels given ($(head -1 "$work/agree.check"))" '[ $rc -eq 0 ]'
  else
    echo "FAIL evalgraph agree --labels <download>: $(head -3 "$work/agree.err")"; fail=1
  fi
fi
[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
