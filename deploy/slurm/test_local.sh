#!/bin/bash
# A real Slurm run on this machine: installs Debian's slurm-wlm and munge when missing, starts munged,
# slurmctld and slurmd as a one-node cluster (configuration, state, sockets and logs in a temp folder;
# loopback only; ports 16817/16818), submits deploy/slurm/submit.sh's array job (3 shards) and merge job on the
# main pipeline, waits for them, compares the merged folder with one unsharded run, and stops the daemons it
# started. Exit 0 only when everything matched. Needs root (the daemons and apt-get). Takes ~10 s once the
# packages are installed; ctest runs it (slurm_local_cluster) when they are, and skips it otherwise. usage: deploy/slurm/test_local.sh [BUILD_DIR]   (default: build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
EG="$build/evalgraph"
[ -x "$EG" ] || { echo "no $EG; build first" >&2; exit 2; }
# SKIP_IF_MISSING=1 (ctest): exit 77 (skipped) instead of installing, or when not root.
if [ "$(id -u)" -ne 0 ]; then
  [ "${SKIP_IF_MISSING:-0}" = 1 ] && { echo "skipped: not root"; exit 77; }
  echo "run as root (it starts slurmctld, slurmd and munged)" >&2; exit 2
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  [ "${SKIP_IF_MISSING:-0}" = 1 ] && { echo "skipped: slurm-wlm/munge not installed"; exit 77; }
  echo "installing slurm-wlm and munge" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi

T=$(mktemp -d /tmp/evalgraph-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ "${KEEP:-0}" = 1 ] || rm -rf "$T"
}
trap cleanup EXIT
node=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
mkdir -p "$T/state" "$T/spool" "$T/munge" "$T/results"
chmod 700 "$T/munge"

mungekey -c -k "$T/munge/munge.key" -f
chmod 600 "$T/munge/munge.key"
munged -F --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" --seed-file="$T/munge/seed" > "$T/munge/munged.out" 2>&1 &
pids+=($!)

cat > "$T/slurm.conf" <<CONF
ClusterName=evalgraphtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MaxArraySize=1001
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
for i in $(seq 50); do [ -S "$T/munge/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" > "$T/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" > "$T/slurmd.out" 2>&1 &
pids+=($!)
for i in $(seq 100); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 0.3
done
if ! sinfo -h -o %t | grep -q idle; then
  echo "FAIL: the one-node cluster did not come up" >&2
  tail -20 "$T/slurmctld.log" "$T/slurmd.log" >&2 || true
  exit 1
fi
echo "slurm: node $node idle ($cpus CPUs)"

pipeline="$repo/pipelines/ksodi-standard.yaml"
out=$(EVALGRAPH="$EG" "$repo/deploy/slurm/submit.sh" "$pipeline" "$T/results" 3 --cpus-per-task=1 --mem=1G)
echo "$out"
array=$(sed -n 's/^array job \([0-9]*\).*/\1/p' <<<"$out")
merge=$(sed -n 's/.*merge job \([0-9]*\)$/\1/p' <<<"$out")
for i in $(seq 600); do
  [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
  sleep 0.5
done
if [ -n "$(squeue -h -o %i)" ]; then
  echo "FAIL: jobs still queued after 5 minutes:" >&2
  squeue >&2
  exit 1
fi
merged="$T/results/merged-$array"
if [ ! -f "$merged/run.json" ]; then
  echo "FAIL: no merged results in $merged" >&2
  cat "$T/results"/*.out >&2 || true
  exit 1
fi

single=$("$EG" run -q "$pipeline" -o "$T/single" | tail -n 1)
fails=0
for f in detailed.jsonl detailed.csv; do
  if cmp -s "$single/$f" "$merged/$f"; then echo "ok: $f of the Slurm merge is byte-identical to one run"
  else echo "FAIL: $f differs"; fails=$((fails + 1)); fi
done
if diff <(grep -vE '[0-9]{4}-[0-9]{2}-[0-9]{2}' "$single/summary.md") <(grep -vE '[0-9]{4}-[0-9]{2}-[0-9]{2}' "$merged/summary.md") >/dev/null; then
  echo "ok: summary.md identical but for dates"
else echo "FAIL: summary.md differs"; fails=$((fails + 1)); fi
python3 - "$merged/run.json" "$array" <<'PY' || fails=$((fails + 1))
import json, sys
r = json.load(open(sys.argv[1]))
shards = r["merged"]["shards"]
assert len(shards) == 3, shards
for s in shards:
    sh = s["shard"]
    assert sh["source"] == "SLURM_ARRAY_TASK_ID", sh
    assert sh["env"]["SLURM_ARRAY_JOB_ID"] == sys.argv[2], sh
print("ok: merged run.json names 3 shards from SLURM_ARRAY_TASK_ID of array job", sys.argv[2])
PY
echo "merge job $merge output:"; cat "$T/results/evalgraph-merge-$merge.out"
[ $fails -eq 0 ] && echo "PASS: Slurm array + merge job == one run" || { echo "$fails check(s) failed"; exit 1; }
