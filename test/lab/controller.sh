#!/usr/bin/env bash
# controller.sh start VERSION [ID]  start VERSION (e.g. v1.9.3). Without ID it is the
#                                   lab's default controller (no --instance-id; it
#                                   replaces the default one running, if any). With ID
#                                   it runs beside the others with --instance-id=ID and
#                                   reconciles only Rollouts labelled
#                                   argo-rollouts.argoproj.io/controller-instance-id=ID.
# controller.sh stop [ID]           stop one (default: the default controller) and
#                                   delete its Deployment
# controller.sh stop-all            stop every controller
# controller.sh list                print "ID VERSION HEALTHZ-PORT" for each running one
#                                   ("-" is the default controller)
# controller.sh version             print the default controller's version
# Each controller appears as a Deployment (argo-rollouts, or argo-rollouts-ID) in
# namespace argo-rollouts with its version as image tag and its args, so the
# plugin's version detection sees what runs and which Rollouts each one owns.
# LAB_CONTROLLER_ARGS adds flags (the benchmark raises --qps to reconcile its
# fleet in minutes). LAB_CONTROLLER_KUBECONFIG gives the controller another
# identity than the lab's admin (the e2e's RBAC scenario: a ServiceAccount's
# token bound to a ClusterRole that lacks a verb).
# Ports: the default controller uses the metrics/healthz base ports; a controller
# with an ID uses base + 1 + the index of its version in versions.env (so one
# controller per version runs side by side; LAB_CONTROLLER_SLOT overrides).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# key ID: the process name and state key of a controller.
key() { if [[ -n ${1:-} ]]; then echo "rollouts-controller-$1"; else echo rollouts-controller; fi; }

# slot VERSION ID: the port offset of a controller.
slot() {
	if [[ -n ${LAB_CONTROLLER_SLOT:-} ]]; then echo "$LAB_CONTROLLER_SLOT"; return; fi
	[[ -z $2 ]] && { echo 0; return; }
	local i=1 v
	for v in $CONTROLLER_VERSIONS; do
		[[ $v == "$1" ]] && { echo "$i"; return; }
		i=$((i + 1))
	done
	die "$1 is not in CONTROLLER_VERSIONS (versions.env): set LAB_CONTROLLER_SLOT"
}

stop_controller() { # ID [delete]
	local k
	k="$(key "${1:-}")"
	stop "$k"
	stop "$k-cri"
	rm -f "$STATE/controllers/$k"
	if [[ -n ${2:-} ]] && running kube-apiserver; then
		local name=argo-rollouts
		[[ -n ${1:-} ]] && name="argo-rollouts-$1"
		kc -n argo-rollouts delete deployment "$name" --ignore-not-found --wait=false >/dev/null
	fi
}

case "${1:-}" in
start)
	v="${2:?usage: controller.sh start VERSION [ID]}" id="${3:-}"
	[[ -x $BIN/rollouts-controller-$v ]] || die "$BIN/rollouts-controller-$v is missing: run make lab-build"
	running kube-apiserver || die "the lab is not running: run make lab-up"
	[[ -z $id || $id =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || die "instance id $id: use lowercase letters, digits and '-'"
	k="$(key "$id")" s="$(slot "$v" "$id")"
	((s < 10)) || die "port slot $s: the metrics and healthz ranges hold 10 controllers"
	metrics=$((CONTROLLER_METRICS_PORT + s)) healthz=$((CONTROLLER_HEALTHZ_PORT + s))
	stop "$k"
	stop "$k-cri"
	# Something else answering on the port would pass the health check below.
	curl -s -o /dev/null "http://127.0.0.1:$healthz/healthz" && die "port $healthz is in use (another controller?)"
	name=argo-rollouts args='[]' flags=()
	if [[ -n $id ]]; then
		name="argo-rollouts-$id" args="[\"--instance-id=$id\"]" flags=(--instance-id "$id")
	fi
	sed -e "s/NAME/$name/g" -e "s/VERSION/$v/" -e "s/ARGS/$args/" "$LAB/manifests/controller-deployment.yaml" |
		kc apply -f - >/dev/null
	# POD_NAMESPACE is where the controller reads its ConfigMap, as in-cluster.
	POD_NAMESPACE=argo-rollouts start "$k" "$BIN/rollouts-controller-$v" \
		--kubeconfig "${LAB_CONTROLLER_KUBECONFIG:-$KUBECONFIG_LAB}" --leader-elect=false "${flags[@]}" \
		--metricsport "$metrics" --healthzPort "$healthz" ${LAB_CONTROLLER_ARGS:-}
	# Its log as a container runtime writes it, for pods/log of its Deployment's pod.
	: >"$STATE/logs/$k.cri"
	start "$k-cri" "$LAB/crilog.pl" "$STATE/logs/$k.log" "$STATE/logs/$k.cri"
	mkdir -p "$STATE/controllers"
	echo "${id:--} $v $healthz" >"$STATE/controllers/$k"
	wait_for "rollouts-controller $v${id:+ ($id)} healthz" 60 curl -sf "http://127.0.0.1:$healthz/healthz"
	running "$k" || die "rollouts-controller $v${id:+ ($id)} exited (log: $STATE/logs/$k.log)"
	# kwok serves the Deployment pod's log from the controller's: a Logs object
	# named after the pod (`kubectl logs -n argo-rollouts deploy/NAME`).
	wait_for "a running pod of Deployment $name" 60 bash -c \
		"[[ -n \$(kubectl --kubeconfig '$KUBECONFIG_LAB' -n argo-rollouts get pods -l app.kubernetes.io/instance=$name --field-selector status.phase=Running -o name) ]]"
	for pod in $(kc -n argo-rollouts get pods -l "app.kubernetes.io/instance=$name" -o jsonpath='{.items[*].metadata.name}'); do
		printf 'apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Logs\nmetadata: {name: %s, namespace: argo-rollouts}\nspec:\n  logs:\n  - containers: [argo-rollouts]\n    logsFile: %s\n    follow: true\n' \
			"$pod" "$STATE/logs/$k.cri"
		echo ---
	done | kc apply -f - >/dev/null
	log "Argo Rollouts controller $v${id:+ --instance-id=$id} running (log: $STATE/logs/$k.log)"
	;;
stop)
	stop_controller "${2:-}" delete
	;;
stop-all)
	for f in "$STATE"/controllers/rollouts-controller*; do
		[[ -f $f ]] || continue
		read -r id _ _ <"$f"
		[[ $id == - ]] && id=""
		stop_controller "$id" delete
	done
	;;
list)
	for f in "$STATE"/controllers/rollouts-controller*; do
		[[ -f $f ]] && running "$(basename "$f")" && cat "$f"
	done
	;;
version)
	running rollouts-controller && cut -d' ' -f2 "$STATE/controllers/rollouts-controller"
	;;
*)
	die "usage: controller.sh start VERSION [ID] | stop [ID] | stop-all | list | version"
	;;
esac
