#!/bin/bash
# Submits a sharded evalgraph run: an array job of N shards, then the merge job, which Slurm starts only after
# every array task succeeded (--dependency=afterok).
# usage: deploy/slurm/submit.sh PIPELINE.yaml RESULTS_DIR N [extra sbatch options for both jobs, e.g. --partition=cpu]
# env: EVALGRAPH (the binary; default: evalgraph on PATH), SHARED_CACHE (an LLM cache to start from, read only).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 PIPELINE.yaml RESULTS_DIR N [sbatch options...]" >&2
  exit 2
fi
pipeline=$(realpath "$1") results=$(realpath -m "$2") n=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
array=$(sbatch --parsable --array=0-$((n - 1)) --chdir="$results" \
  --export=ALL,PIPELINE="$pipeline",RESULTS="$results",EVALGRAPH="${EVALGRAPH:-evalgraph}",SHARED_CACHE="${SHARED_CACHE:-}" \
  "$@" "$here/evalgraph-array.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes --chdir="$results" \
  --export=ALL,RESULTS="$results",ARRAY_JOB_ID="$array",EVALGRAPH="${EVALGRAPH:-evalgraph}" \
  "$@" "$here/evalgraph-merge.sbatch")
merge=${merge%%;*}
echo "array job $array ($n shards), merge job $merge"
echo "results: $results/merged-$array"
