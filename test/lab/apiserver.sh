#!/usr/bin/env bash
# apiserver.sh start NAME PORT [ETCD_PREFIX]: one more kube-apiserver over the
# running lab's etcd, on 127.0.0.1:PORT with the lab's certificates (the
# kubeconfig's credentials work against it). It serves the same objects as the
# lab's own API server, from its own process and watch cache, as a second
# cluster with the same contents would: the benchmark scans several such
# "clusters" at once. With ETCD_PREFIX (say /bare) it keeps its objects there
# instead: a cluster of its own with only what an API server creates by itself
# (no CRDs, no workloads). apiserver.sh stop NAME stops it; down.sh stops them
# all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
start)
	[[ $# == 3 || $# == 4 ]] || die "usage: apiserver.sh start NAME PORT [ETCD_PREFIX]"
	running kube-apiserver || die "the lab is not running: run make lab-up"
	name="kube-apiserver-$2"
	running "$name" && die "$name is already running"
	start_apiserver "$name" "$3" "${4:-}"
	wait_for "$name /readyz" 120 kc --server "https://127.0.0.1:$3" get --raw /readyz
	log "$name serves on https://127.0.0.1:$3"
	;;
stop)
	[[ $# == 2 ]] || die "usage: apiserver.sh stop NAME"
	stop "kube-apiserver-$2"
	;;
*) die "usage: apiserver.sh start NAME PORT [ETCD_PREFIX] | stop NAME" ;;
esac
