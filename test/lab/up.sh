#!/usr/bin/env bash
# Starts the lab: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kwok with fake nodes, the Argo Rollouts and minimal Istio CRDs, and the Argo
# Rollouts controller LAB_CONTROLLER: a version (default v1.8.2) runs as the
# default controller (no --instance-id); "all" runs one controller per version
# of versions.env side by side, each with --instance-id=lab-vX-Y-Z; "none"
# starts none.
# Writes $STATE/kubeconfig. Stop everything with down.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CONTROLLER="${LAB_CONTROLLER:-v1.8.2}"
NODES="${LAB_NODES:-4}"
NODE_PODS="${LAB_NODE_PODS:-110}" # pods each node takes (the benchmark's fleet needs more than 110)
running kube-apiserver && die "a lab is already running (state in $STATE); run make lab-down first"
for b in "etcd-$ETCD_VERSION" "kube-apiserver-$KUBERNETES_VERSION" "kube-controller-manager-$KUBERNETES_VERSION" \
	"kube-scheduler-$KUBERNETES_VERSION" "kwok-$KWOK_VERSION"; do
	[[ -x $BIN/$b ]] || die "$BIN/$b is missing: run make lab-build"
done
rm -rf "$STATE" && mkdir -p "$STATE/pki" "$STATE/logs" "$STATE/pids"
# Whatever fails from here on, stop what was started: never leave half a lab.
started=0
failed() {
	[[ $started == 1 ]] && return
	export LAB_KEEP_LOGS="${LAB_KEEP_LOGS:-$(mktemp -d /tmp/rolloutdoctor-lab-logs.XXXXXX)}"
	log "start failed; stopping what was started (logs kept in $LAB_KEEP_LOGS)"
	"$LAB/down.sh" >/dev/null 2>&1 || true
}
trap failed EXIT

# --- certificates: a CA, the API server's serving cert, an admin client in
# system:masters (used by every component and by the user), a front-proxy
# client for the aggregation layer, and the service-account key pair.
pki="$STATE/pki"
ossl() { openssl "$@" 2>/dev/null; }
ossl req -x509 -newkey rsa:2048 -nodes -days 3 -subj /CN=rolloutdoctor-lab-ca \
	-keyout "$pki/ca.key" -out "$pki/ca.crt"
cert() { # name subject [sans]
	ossl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr"
	local ext="$pki/$1.ext"
	if [[ -n ${3:-} ]]; then printf 'subjectAltName=%s\n' "$3" >"$ext"; else : >"$ext"; fi
	ossl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
		-days 3 -extfile "$ext" -out "$pki/$1.crt"
}
cert apiserver /CN=kube-apiserver "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc"
cert admin "/O=system:masters/CN=lab-admin"
cert front-proxy /CN=front-proxy-client
cert kubelet /CN=lab-kubelet "IP:127.0.0.1" # kwok's server, the nodes' kubelet endpoint
ossl genrsa -out "$pki/sa.key" 2048
ossl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"

kubectl config --kubeconfig "$KUBECONFIG_LAB" set-cluster lab --server "https://127.0.0.1:$APISERVER_PORT" \
	--certificate-authority "$pki/ca.crt" --embed-certs >/dev/null
kubectl config --kubeconfig "$KUBECONFIG_LAB" set-credentials lab-admin --client-certificate "$pki/admin.crt" \
	--client-key "$pki/admin.key" --embed-certs >/dev/null
kubectl config --kubeconfig "$KUBECONFIG_LAB" set-context lab --cluster lab --user lab-admin >/dev/null
kubectl config --kubeconfig "$KUBECONFIG_LAB" use-context lab >/dev/null

# --- control plane
start etcd "$BIN/etcd-$ETCD_VERSION" --data-dir "$STATE/etcd" --name lab \
	--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster "lab=http://127.0.0.1:$ETCD_PEER_PORT" --quota-backend-bytes 4294967296 \
	--unsafe-no-fsync --log-level warn

start_apiserver kube-apiserver "$APISERVER_PORT"
wait_for "kube-apiserver /readyz" 90 kc get --raw /readyz

# Client rate limits off, as kwokctl does for simulated clusters: at their
# defaults (controller-manager 20 requests/s per controller, scheduler 50) the
# ReplicaSet controller queues pod creations and status updates for seconds
# when many Rollouts ramp at once (the e2e suite runs dozens), and every
# controller then sees pods turn available late. LAB_KCM_CONTROLLERS is its
# --controllers (default '*'); the e2e suite drops the legacy Endpoints
# controllers (see test/lab/README.md).
start kube-controller-manager "$BIN/kube-controller-manager-$KUBERNETES_VERSION" \
	--kubeconfig "$KUBECONFIG_LAB" --authentication-kubeconfig "$KUBECONFIG_LAB" \
	--kube-api-qps 5000 --kube-api-burst 10000 \
	--authorization-kubeconfig "$KUBECONFIG_LAB" --controllers "${LAB_KCM_CONTROLLERS:-*}" --leader-elect=false \
	--bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
	--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
	--cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key"
start kube-scheduler "$BIN/kube-scheduler-$KUBERNETES_VERSION" \
	--kubeconfig "$KUBECONFIG_LAB" --authentication-kubeconfig "$KUBECONFIG_LAB" \
	--kube-api-qps 5000 --kube-api-burst 10000 \
	--authorization-kubeconfig "$KUBECONFIG_LAB" --leader-elect=false \
	--bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT"

# --- kwok: fake nodes that heartbeat through Leases (40 s, like the kubelet; without
# them the node lifecycle controller marks the nodes NotReady); pods start and turn Ready
# after upstream's "general" delays (1 s + up to 5 s jitter each).
# kwok also serves as the nodes' kubelet on 127.0.0.1:$KUBELET_PORT (HTTPS, the lab CA's
# certificate; each node's status names that port): pods/log of a pod that a
# kwok Logs object maps to a file is that file (controller.sh maps each
# controller Deployment's pod to its controller's log).
[[ -d $BIN/kwok-crds-$KWOK_VERSION ]] || die "$BIN/kwok-crds-$KWOK_VERSION is missing: run make lab-build"
kc apply --server-side -f "$BIN/kwok-crds-$KWOK_VERSION" >/dev/null
kc wait --for condition=Established --timeout 60s crd logs.kwok.x-k8s.io >/dev/null
stages=()
for s in "$BIN/kwok-stages-$KWOK_VERSION"/*.yaml; do stages+=(-c "$s"); done
# The lab's own stages (test/lab/stages): they select only pods annotated for
# them (a crash loop for the RD152 scenario), so no other pod changes.
for s in "$LAB"/stages/*.yaml; do stages+=(-c "$s"); done
start kwok "$BIN/kwok-$KWOK_VERSION" --kubeconfig "$KUBECONFIG_LAB" "${stages[@]}" \
	--manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
	--node-ip 127.0.0.1 --cidr 10.244.0.0/16 --node-lease-duration-seconds 40 \
	--node-port "$KUBELET_PORT" --server-address "127.0.0.1:$KUBELET_PORT" --enable-crds Logs \
	--tls-cert-file "$pki/kubelet.crt" --tls-private-key-file "$pki/kubelet.key"

wait_for "the default ServiceAccount" 60 kc get serviceaccount default -n default
for i in $(seq 1 "$NODES"); do
	sed -e "s/NAME/lab-node-$i/" -e "s/pods: \"110\"/pods: \"$NODE_PODS\"/g" "$LAB/manifests/node.yaml"
	echo ---
done | kc apply -f - >/dev/null
wait_for "$NODES Ready nodes" 60 bash -c \
	"[[ \$(kubectl --kubeconfig '$KUBECONFIG_LAB' get nodes --no-headers | grep -c ' Ready ') -ge $NODES ]]"

# --- CRDs: the newest built controller's Argo Rollouts CRDs, Istio's
# VirtualService and DestinationRule (the controller looks for them at start),
# the SMI and Traefik objects the controller writes for those routers, and
# Argo CD's Application and Flux's Kustomization and HelmRelease, stored as
# data only.
newest="${CONTROLLER_VERSIONS##* }"
[[ -d $BIN/crds-$newest ]] || die "$BIN/crds-$newest is missing: run make lab-build"
kc apply --server-side -f "$BIN/crds-$newest" >/dev/null
kc apply --server-side -f "$LAB/manifests/istio-crds.yaml" >/dev/null
kc apply --server-side -f "$LAB/manifests/argocd-application-crd.yaml" >/dev/null # read as data: Argo CD does not run here
kc apply --server-side -f "$LAB/manifests/flux-crds.yaml" >/dev/null               # read as data: Flux does not run here
kc apply --server-side -f "$LAB/manifests/router-crds.yaml" >/dev/null
kc create namespace istio-system >/dev/null # where Istio's mesh ConfigMap lives (docs/rbac.yaml names it)
kc create namespace argo-rollouts >/dev/null # where the controllers' Deployments are
kc wait --for condition=Established --timeout 60s crd --all >/dev/null

case "$CONTROLLER" in
none) ;;
all)
	for v in $CONTROLLER_VERSIONS; do
		"$LAB/controller.sh" start "$v" "lab-${v//./-}" &
	done
	wait_all=0
	for _ in $CONTROLLER_VERSIONS; do wait -n || wait_all=1; done
	((wait_all == 0)) || die "a controller did not start"
	;;
*) "$LAB/controller.sh" start "$CONTROLLER" ;;
esac
started=1

cat <<EOF
lab is up: Kubernetes $KUBERNETES_VERSION, $NODES kwok nodes, Argo Rollouts controller $CONTROLLER
  export KUBECONFIG=$KUBECONFIG_LAB
  kubectl get nodes
  kubectl rolloutdoctor diagnose ROLLOUT -n NAMESPACE     # or: bin/kubectl-rolloutdoctor ...
switch controllers with:  test/lab/controller.sh start v1.10.2
one beside the others:    test/lab/controller.sh start v1.9.3 blue   # reconciles Rollouts labelled
                          #   argo-rollouts.argoproj.io/controller-instance-id: blue
stop with:                make lab-down
EOF
