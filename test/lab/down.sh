#!/usr/bin/env bash
# Stops what up.sh started (by PID, nothing else) and removes the lab's state.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for f in "$STATE"/pids/rollouts-controller*.pid; do
	[[ -f $f ]] && stop "$(basename "$f" .pid)"
done
for f in "$STATE"/pids/kube-apiserver-*.pid; do # apiserver.sh's
	[[ -f $f ]] && stop "$(basename "$f" .pid)"
done
for p in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
	stop "$p"
done
# Keep logs of a failed run when asked (CI uploads them).
if [[ -n ${LAB_KEEP_LOGS:-} && -d $STATE/logs ]]; then
	mkdir -p "$LAB_KEEP_LOGS" && cp "$STATE"/logs/*.log "$LAB_KEEP_LOGS"/ 2>/dev/null || true
fi
rm -rf "$STATE"
log "lab stopped"
