#!/usr/bin/env bash
# Sharded runs + evalgraph merge against one unsharded run, on the shipped KSODI pipelines:
#   KSODI-Standard in 3 shards (--shard, Slurm variables, Kubernetes index) == one run, byte for byte;
#   KSODI-Full (sequence nodes, group_by conversation_id): every conversation whole in one shard;
#   replications stay together; the refusals (missing, duplicate, different fingerprint, bad --shard).
# usage: shard_merge_test.sh BUILD_DIR REPO_DIR WORK_DIR
set -u
BUILD=$(cd "$1" && pwd) REPO=$(cd "$2" && pwd) T=$3
EG="$BUILD/evalgraph"
rm -rf "$T" && mkdir -p "$T"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# `evalgraph run` prints its results folder as the last line of stdout.
run() { "$EG" run -q -j 2 "$@" | tail -n 1; }

same_results() {  # single merged label
  local a=$1 b=$2 what=$3
  for f in detailed.jsonl detailed.csv; do
    if [ -f "$a/$f" ] || [ -f "$b/$f" ]; then
      cmp -s "$a/$f" "$b/$f" && ok "$what: $f byte-identical" || fail "$what: $f differs ($(cmp "$a/$f" "$b/$f" 2>&1 | head -1))"
    fi
  done
  if [ -f "$a/summary.md" ]; then
    # the summary's only run-dependent lines are its dates
    if diff <(grep -v -E '[0-9]{4}-[0-9]{2}-[0-9]{2}' "$a/summary.md") <(grep -v -E '[0-9]{4}-[0-9]{2}-[0-9]{2}' "$b/summary.md") >/dev/null; then
      ok "$what: summary.md identical but for dates"
    else
      fail "$what: summary.md differs"; diff "$a/summary.md" "$b/summary.md" | head -10
    fi
  fi
  [ -f "$b/report.html" ] && ok "$what: report.html written by the merge" || fail "$what: no report.html in the merge"
}

STD="$REPO/pipelines/ksodi-standard.yaml"
single=$(run "$STD" -o "$T/single")
[ -d "$single" ] || { echo "FAIL: single run did not produce a folder"; exit 1; }

# 1. --shard I/N
shards=()
for i in 1 2 3; do shards+=("$(run "$STD" --shard $i/3 -o "$T/shards")"); done
total=0
for s in "${shards[@]}"; do
  n=$(wc -l < "$s/detailed.jsonl"); total=$((total + n))
  [ "$n" -gt 0 ] || fail "shard $s is empty"
  python3 -c "import json,sys; r=json.load(open('$s/run.json')); s=r['shard']; assert s['source']=='--shard' and s['count']==3 and set(r['fingerprint'])>={'pipeline','plugins','parameters','dataset','engine'}, r" \
    && ok "run.json of $(basename "$s") marks the shard and its fingerprint" || fail "run.json of $s lacks shard/fingerprint"
done
[ "$total" -eq "$(wc -l < "$single/detailed.jsonl")" ] && ok "shards hold $total records together, as the single run" || fail "shards hold $total records"
"$EG" merge -q "${shards[@]}" -o "$T/merged" > /dev/null || fail "merge exited $?"
same_results "$single" "$T/merged" "--shard 3-way merge"
python3 - "$T/merged/run.json" <<'PY' && ok "merged run.json: per-shard provenance, record counts" || fail "merged run.json"
import json, sys
r = json.load(open(sys.argv[1]))
m = r["merged"]
assert m["count"] == 3 and [s["shard"]["index"] for s in m["shards"]] == [0, 1, 2], m
assert sum(s["records"] for s in m["shards"]) == r["records"] == 64, r["records"]
assert all(s["shard"]["host"] for s in m["shards"])
PY

# shards given in another order merge the same
"$EG" merge -q "${shards[2]}" "${shards[0]}" "${shards[1]}" -o "$T/merged-reordered" > /dev/null
cmp -s "$T/merged/detailed.jsonl" "$T/merged-reordered/detailed.jsonl" && ok "merge ignores the order of the folders" || fail "order matters"

# 2. Slurm array variables (an array 4-6), Kubernetes Indexed Job (index 0-2, count from the environment)
sl=()
for id in 4 5 6; do sl+=("$(SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=4 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_JOB_ID=77 run "$STD" -o "$T/slurm")"); done
grep -q '"source": "SLURM_ARRAY_TASK_ID"' "${sl[0]}/run.json" && ok "run.json records SLURM_ARRAY_TASK_ID as the source" || fail "slurm source not recorded"
"$EG" merge -q "${sl[@]}" -o "$T/merged-slurm" > /dev/null || fail "slurm merge exited $?"
same_results "$single" "$T/merged-slurm" "Slurm variables"
k8=()
for idx in 0 1 2; do k8+=("$(JOB_COMPLETION_INDEX=$idx EVALGRAPH_SHARD_COUNT=3 run "$STD" -o "$T/k8s")"); done
grep -q '"source": "JOB_COMPLETION_INDEX"' "${k8[0]}/run.json" && ok "run.json records JOB_COMPLETION_INDEX" || fail "k8s source not recorded"
cmp -s "${k8[1]}/detailed.jsonl" "${shards[1]}/detailed.jsonl" && ok "JOB_COMPLETION_INDEX=1 is shard 2/3" || fail "k8s index 1 != --shard 2/3"

# 3. KSODI-Full: sequence nodes grouped by conversation_id
FULL="$REPO/pipelines/ksodi-full.yaml"
fsingle=$(run "$FULL" -o "$T/full-single")
fsh=()
for i in 1 2 3; do fsh+=("$(run "$FULL" --shard $i/3 -o "$T/full-shards")"); done
python3 - "${fsh[@]}" <<'PY' && ok "KSODI-Full: every conversation whole in one shard" || fail "KSODI-Full: a conversation is split"
import json, sys
owner = {}
for s in sys.argv[1:]:
    for line in open(s + "/detailed.jsonl"):
        c = json.loads(line)["conversation_id"]
        assert owner.setdefault(c, s) == s, f"conversation {c} in {owner[c]} and {s}"
assert len(set(owner.values())) >= 2, "all conversations in one shard: the test shows nothing"
PY
"$EG" merge -q "${fsh[@]}" -o "$T/full-merged" > /dev/null || fail "full merge exited $?"
same_results "$fsingle" "$T/full-merged" "KSODI-Full 3-way"

# 4. replications stay together (and merge back in the single run's order)
sed -e 's/^replications: 1/replications: 3/' -e "s#path: data/#path: $REPO/pipelines/data/#" "$STD" > "$T/rep.yaml"
grep -q '^replications: 3' "$T/rep.yaml" || fail "could not make the replications pipeline"
rsingle=$(run "$T/rep.yaml" -o "$T/rep-single" --no-report)
rsh=()
for i in 1 2; do rsh+=("$(run "$T/rep.yaml" --shard $i/2 -o "$T/rep-shards" --no-report)"); done
python3 - "${rsh[@]}" <<'PY' && ok "replications of a record in one shard" || fail "replications split"
import json, sys
from collections import Counter
for s in sys.argv[1:]:
    c = Counter(json.loads(l)["id"] for l in open(s + "/detailed.jsonl"))
    assert set(c.values()) == {3}, c
PY
"$EG" merge -q "${rsh[@]}" -o "$T/rep-merged" > /dev/null || fail "rep merge exited $?"
cmp -s "$rsingle/detailed.jsonl" "$T/rep-merged/detailed.jsonl" && ok "replications: merged detailed.jsonl == single" || fail "replications: merged differs"
[ ! -f "$T/rep-merged/report.html" ] && ok "merge of --no-report shards writes no report" || fail "merge added a report"

# more shards than records: the empty shards are shards all the same
e=()
for i in 1 2 3 4 5 6 7 8 9 10; do e+=("$(run "$STD" --shard $i/10 --limit 6 --no-report -o "$T/empty")"); done
[ "$(wc -l < "${e[9]}/detailed.jsonl")" -eq 0 ] && ok "shard 10/10 of 6 records is empty" || fail "shard 10/10 of 6 records is not empty"
"$EG" merge -q "${e[@]}" -o "$T/empty-merged" > /dev/null || fail "merge with empty shards exited $?"
lim=$(run "$STD" --limit 6 --no-report -o "$T/limit6")
cmp -s "$lim/detailed.jsonl" "$T/empty-merged/detailed.jsonl" && ok "10 shards of --limit 6 (4 empty) merge into the --limit 6 run" || fail "--limit 6 merge differs"

# 5. refusals, exit 2, nothing written
expect_refusal() {  # message args...
  local msg=$1; shift
  out=$("$@" 2>&1); rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$msg" <<<"$out"; then ok "refused (exit 2): $msg"; else fail "expected exit 2 with '$msg', got $rc: $out"; fi
}
expect_refusal "shard 2/3 is missing" "$EG" merge "${shards[0]}" "${shards[2]}" -o "$T/m1"
[ ! -e "$T/m1" ] && ok "a refused merge writes nothing" || fail "a refused merge wrote $T/m1"
expect_refusal "shard 1/3 is given 2 times" "$EG" merge "${shards[0]}" "${shards[0]}" "${shards[1]}" "${shards[2]}" -o "$T/m2"
expect_refusal "is one of 2 shards" "$EG" merge "${rsh[0]}" "${shards[1]}" "${shards[2]}" -o "$T/m3"
sed -e 's/interpretable_min: 0.4/interpretable_min: 0.5/' -e "s#path: data/#path: $REPO/pipelines/data/#" "$STD" > "$T/other.yaml"
other=$(run "$T/other.yaml" --shard 2/3 -o "$T/other")
expect_refusal "in its parameters" "$EG" merge "${shards[0]}" "$other" "${shards[2]}" -o "$T/m4"
# the same pipeline over a data set that differs in one byte
sed 's/"tel-001"/"tel-00X"/' "$REPO/pipelines/data/ksodi_standard_sample.jsonl" > "$T/changed.jsonl"
cmp -s "$T/changed.jsonl" "$REPO/pipelines/data/ksodi_standard_sample.jsonl" && fail "could not change the data set"
sed -e "s#path: data/ksodi_standard_sample.jsonl#path: $T/changed.jsonl#" -e "s#dir: ../results#dir: $T/x#" "$STD" > "$T/changed.yaml"
sed -e "s#path: data/ksodi_standard_sample.jsonl#path: $REPO/pipelines/data/ksodi_standard_sample.jsonl#" -e "s#dir: ../results#dir: $T/x#" "$STD" > "$T/unchanged.yaml"
c1=$(run "$T/changed.yaml" --shard 1/2 --no-report -o "$T/changed")
c2=$(run "$T/unchanged.yaml" --shard 2/2 --no-report -o "$T/changed")
expect_refusal "in its dataset" "$EG" merge "$c1" "$c2" -o "$T/m6"
expect_refusal "not a shard" "$EG" merge "$single" -o "$T/m5"
expect_refusal "exists and is not empty" "$EG" merge "${shards[@]}" -o "$T/merged"
expect_refusal "shard 4 of 3 does not exist" "$EG" run "$STD" --shard 4/3 -o "$T/x"
expect_refusal "is not I/N" "$EG" run "$STD" --shard 2 -o "$T/x"
expect_refusal "EVALGRAPH_SHARD_COUNT" env JOB_COMPLETION_INDEX=0 "$EG" run "$STD" -o "$T/x"
expect_refusal "drop --no-journal" "$EG" run "$STD" --shard 1/2 --no-journal -o "$T/x"

# a damaged shard (its journal lost a record): the merge fails (exit 3) naming the shard, and writes nothing
cp -r "${shards[1]}" "$T/damaged"
awk '/^[DF]/ && ++n == 3 { next } { print }' "${shards[1]}/shard/records.journal" > "$T/damaged/shard/records.journal"
out=$("$EG" merge "${shards[0]}" "$T/damaged" "${shards[2]}" -o "$T/m7" 2>&1); rc=$?
if [ $rc -eq 3 ] && grep -qF "shard 2/3 ($T/damaged) has 20 records" <<<"$out" && [ ! -e "$T/m7" ]; then
  ok "a shard whose journal lost a record is named, exit 3, nothing written"
else fail "damaged journal: exit $rc, $(ls "$T/m7" 2>&1 | head -3): $out"; fi

if [ $fails -gt 0 ]; then echo "$fails check(s) failed"; exit 1; fi
echo "all sharding checks passed"
