#!/usr/bin/env bash
# Byte identity of the shipped pipelines' outputs between two builds (e.g. before and after a port of the
# plugin glue): runs pipelines/ksodi-standard.yaml, ksodi-full.yaml, chatbot-eval.yaml and compression-eval.yaml
# with each build's evalgraph and plugins (the two LLM pipelines
# against the loopback test server eg-test-llm-server of the NEW build, same seed and replies for both), then
# compares every file of the results folders byte for byte — detailed.jsonl, detailed.csv, the summaries,
# the reports' data (an .xlsx but for the second it was written) — except what names the run (run.json, run.log, report.html, pipeline.yaml, progress/).
# The seed-004 configuration run (`evalgraph run --config-dir pipelines/chatbot/config`) is compared too: a copy
# of pipelines/chatbot whose judge, model and chatbot URLs point at the same loopback server, with a temporary
# key file in secrets/llm_api.secret (what the configuration names); the run folder's dataset.jsonl is compared.
# Then combine-experiments of those two run folders, with each build.
#   bash bench/output_identity.sh REF_BUILD_DIR NEW_BUILD_DIR     exit 0: identical; 1: a file differs
#   (KEEP=1 keeps the results folders and says where)
# A build dir is what `cmake --build` made (evalgraph and plugins/ in it), or a copy of those two.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
ref=$(cd "${1:?usage: output_identity.sh REF_BUILD_DIR NEW_BUILD_DIR}" && pwd)
new=$(cd "${2:?usage: output_identity.sh REF_BUILD_DIR NEW_BUILD_DIR}" && pwd)
server_bin=$new/eg-test-llm-server
[ -x "$server_bin" ] || server_bin=$ref/eg-test-llm-server
work=$(mktemp -d)
# shellcheck source=bench/test_server.sh
. "$repo/bench/test_server.sh"
cleanup() {
  stop_test_server
  rm -f "${ref_compat:-}"
  if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
start_test_server "$server_bin" "$work" --reply "{last_user}" --threads 2
export EVALGRAPH_BASE_URL=$url CI=true

# The KSODI sample in two more spellings the operators must read alike: every non-ASCII character as a \u
# escape (Python's json.dumps default), and CSV with the docs as JSON text in a cell.
python3 - "$repo/pipelines" "$work/variants" <<'PY'
import csv, json, os, sys
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
rows = [json.loads(l) for l in open(os.path.join(src, "data/ksodi_standard_sample.jsonl"), encoding="utf-8") if l.strip()]
with open(os.path.join(out, "ascii.jsonl"), "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
keys = list(dict.fromkeys(k for r in rows for k in r))
with open(os.path.join(out, "cells.csv"), "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(keys)
    for r in rows: w.writerow(["" if r.get(k) is None else r[k] if isinstance(r.get(k), str) else json.dumps(r[k], ensure_ascii=False) for k in keys])
pipe = open(os.path.join(src, "ksodi-standard.yaml"), encoding="utf-8").read()
for name, fmt in (("ascii.jsonl", "jsonl"), ("cells.csv", "csv")):
    p = pipe.replace("path: data/ksodi_standard_sample.jsonl", "path: " + name).replace("format: jsonl", "format: " + fmt)
    open(os.path.join(out, name.split(".")[0] + ".yaml"), "w", encoding="utf-8").write(p)
PY

# The seed-004 project (config/, data/) with every URL on the loopback server and a throwaway key.
cp -r "$repo/pipelines/chatbot" "$work/chatbot-project"
mkdir -p "$work/chatbot-project/secrets"
echo "sk-output-identity" >"$work/chatbot-project/secrets/llm_api.secret"
sed -i -e "s#https://api.openai.com/v1#$url#g" -e "s#http://127.0.0.1:8080/v1#$url#g" \
  "$work/chatbot-project/config/"*.yaml

run() {  # $1 build $2 ref|new $3 label $4... evalgraph run arguments; prints the results folder
  local out="$work/$3/$2"
  mkdir -p "$out"
  (cd "$repo" && "$1/evalgraph" run -q --no-cache "${@:4}" -o "$out" >/dev/null 2>"$out.err") || true
  ls -d "$out"/*/ | head -1
}

# An .xlsx (a ZIP) holds the second it was written (docProps/core.xml, dcterms:created and :modified): two runs
# a second apart differ there alone. Same members in the same order, byte for byte, that time blanked.
xlsx_same() {
  python3 - "$1" "$2" <<'PY'
import re, sys, zipfile
def members(path):
    z = zipfile.ZipFile(path)
    out = []
    for i in z.infolist():
        data = z.read(i)
        if i.filename == "docProps/core.xml":
            data = re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*", rb"\1", data)
        out.append((i.filename, data))
    return out
sys.exit(0 if members(sys.argv[1]) == members(sys.argv[2]) else 1)
PY
}

# Node types renamed since the reference build (compress.* → compression.*, engine/plugin/defaults.h): a reference
# build that does not know the new names runs a copy of the pipeline with the old ones, beside the original so
# that its relative paths hold.
compression_ref="pipelines/compression-eval.yaml"
ref_types=$("$ref/evalgraph" plugins 2>/dev/null || true)  # (not piped into grep -q: SIGPIPE + pipefail)
if ! grep -q 'compression\.anchored' <<<"$ref_types"; then
  ref_compat="$repo/pipelines/.compression-eval.ref-names.yaml"
  sed -E 's/\bcompression\.(anchored|opaque|regenerative)\b/compress.\1/g' "$repo/pipelines/compression-eval.yaml" \
    >"$ref_compat"
  compression_ref="$ref_compat"
fi

status=0
for spec in "ksodi-standard|pipelines/ksodi-standard.yaml" "ksodi-full|pipelines/ksodi-full.yaml" \
            "chatbot-eval|pipelines/chatbot-eval.yaml" "compression-eval|pipelines/compression-eval.yaml" \
            "ksodi-standard-ascii|$work/variants/ascii.yaml" "ksodi-standard-csv|$work/variants/cells.yaml" \
            "chatbot-config-dir|--config-dir $work/chatbot-project/config"; do
  label=${spec%%|*}
  ref_args=${spec#*|}
  [ "$label" = compression-eval ] && ref_args=$compression_ref
  # shellcheck disable=SC2086
  a=$(run "$ref" ref "$label" $ref_args)
  # shellcheck disable=SC2086
  b=$(run "$new" new "$label" ${spec#*|})
  files=$(cd "$a" && find . -type f ! -name run.json ! -name run.log ! -name report.html ! -name pipeline.yaml \
            ! -path './progress/*' | sort)
  nb=$(cd "$b" && find . -type f ! -name run.json ! -name run.log ! -name report.html ! -name pipeline.yaml \
         ! -path './progress/*' | sort)
  if [ "$files" != "$nb" ]; then
    echo "DIFFER $label: the results folders hold different files"; diff <(echo "$files") <(echo "$nb") || true; status=1
    continue
  fi
  n=0
  for f in $files; do
    n=$((n + 1))
    if ! cmp -s "$a/$f" "$b/$f" && ! { [ "${f##*.}" = xlsx ] && xlsx_same "$a/$f" "$b/$f"; }; then
      echo "DIFFER $label: $f"; cmp "$a/$f" "$b/$f" | head -1 || true; status=1
    fi
  done
  echo "checked $label: $n files ($(cd "$a" && du -ch $files | tail -1 | cut -f1))"
done
# combine-experiments over the two seed-004 run folders above, with each build: the combined report's files
# (a newer build's folder also holds what every results folder holds: pipeline.yaml, run.json, run.log, its rows).
combined() {  # $1 build $2 ref|new; prints the combined folder
  "$1/evalgraph" combine-experiments "$(ls -d "$work/chatbot-config-dir/ref"/*/ | head -1)" \
    "$(ls -d "$work/chatbot-config-dir/new"/*/ | head -1)" -o "$work/combine/$2" >/dev/null 2>"$work/combine-$2.err" || true
  ls -d "$work/combine/$2/combined_experiments"/*/ | head -1
}
a=$(combined "$ref" ref)
b=$(combined "$new" new)
n=0
for f in $(cd "$a" && find . -type f ! -name run.json ! -name run.log ! -name pipeline.yaml ! -name report.html \
             ! -name '*.jsonl' -o -name detailed_results.jsonl | sort); do
  n=$((n + 1))
  if ! cmp -s "$a/$f" "$b/$f" && ! { [ "${f##*.}" = xlsx ] && xlsx_same "$a/$f" "$b/$f"; }; then
    echo "DIFFER combine-experiments: $f"; status=1
  fi
done
echo "checked combine-experiments: $n files"
[ "$status" = 0 ] && echo "IDENTICAL: every output of the shipped pipelines"
exit "$status"
