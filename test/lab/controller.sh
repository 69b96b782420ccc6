#!/usr/bin/env bash
# controller.sh start VERSION   stop the lab's Argo Rollouts controller, if any,
#                               and start VERSION (e.g. v1.9.3) in its place
# controller.sh stop            stop it
# controller.sh version         print the running version
# The argo-rollouts Deployment's image tag follows, so the plugin's version
# detection sees what runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
start)
	v="${2:?usage: controller.sh start VERSION}"
	[[ -x $BIN/rollouts-controller-$v ]] || die "$BIN/rollouts-controller-$v is missing: run make lab-build"
	running kube-apiserver || die "the lab is not running: run make lab-up"
	stop rollouts-controller
	sed "s/VERSION/$v/" "$LAB/manifests/controller-deployment.yaml" | kc apply -f - >/dev/null
	# POD_NAMESPACE is where the controller reads its ConfigMap, as in-cluster.
	POD_NAMESPACE=argo-rollouts start rollouts-controller "$BIN/rollouts-controller-$v" \
		--kubeconfig "$KUBECONFIG_LAB" --leader-elect=false \
		--metricsport "$CONTROLLER_METRICS_PORT" --healthzPort "$CONTROLLER_HEALTHZ_PORT"
	echo "$v" >"$STATE/controller-version"
	wait_for "rollouts-controller $v healthz" 60 curl -sf "http://127.0.0.1:$CONTROLLER_HEALTHZ_PORT/healthz"
	log "Argo Rollouts controller $v running (log: $STATE/logs/rollouts-controller.log)"
	;;
stop)
	stop rollouts-controller
	rm -f "$STATE/controller-version"
	;;
version)
	running rollouts-controller && cat "$STATE/controller-version"
	;;
*)
	die "usage: controller.sh start VERSION | stop | version"
	;;
esac
