#!/bin/bash
# A sharded run on Kubernetes end to end: ConfigMap + volume, the Indexed Job of shards, wait until every
# index succeeded, then the merge Job. usage: deploy/k8s/run.sh [NAMESPACE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ns=(); [ $# -ge 1 ] && ns=(-n "$1")
kubectl "${ns[@]}" apply -f "$here/configmap.yaml" -f "$here/pvc.yaml"
kubectl "${ns[@]}" delete job evalgraph-shards evalgraph-merge --ignore-not-found
kubectl "${ns[@]}" apply -f "$here/job-shards.yaml"
# Complete = every index succeeded; Failed = an index ran out of retries (then nothing is merged).
while :; do
  state=$(kubectl "${ns[@]}" get job evalgraph-shards -o jsonpath='{.status.conditions[?(@.status=="True")].type}')
  case "$state" in
    *Complete*) break ;;
    *Failed*) echo "a shard failed; see: kubectl logs -l job-name=evalgraph-shards" >&2; exit 1 ;;
  esac
  sleep 10
done
kubectl "${ns[@]}" apply -f "$here/job-merge.yaml"
kubectl "${ns[@]}" wait --for=condition=complete job/evalgraph-merge --timeout=6h
kubectl "${ns[@]}" logs job/evalgraph-merge
