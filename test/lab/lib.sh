# Shared by the lab scripts: paths, ports and process bookkeeping.
# shellcheck shell=bash
LAB="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
. "$LAB/versions.env"
BIN="$LAB/bin"
STATE="${LAB_STATE:-$LAB/.state}"
KUBECONFIG_LAB="$STATE/kubeconfig"
# Every listener is on 127.0.0.1; ports are chosen away from the defaults so a
# lab can run next to a real cluster's tools.
ETCD_PORT="${LAB_ETCD_PORT:-12379}"
ETCD_PEER_PORT="${LAB_ETCD_PEER_PORT:-12380}"
APISERVER_PORT="${LAB_APISERVER_PORT:-16443}"
KCM_PORT="${LAB_KCM_PORT:-20257}"
SCHEDULER_PORT="${LAB_SCHEDULER_PORT:-20259}"
CONTROLLER_METRICS_PORT="${LAB_CONTROLLER_METRICS_PORT:-18090}"
CONTROLLER_HEALTHZ_PORT="${LAB_CONTROLLER_HEALTHZ_PORT:-18080}"
# kwok's server: the nodes' "kubelet" (HTTPS) that serves pods/log for the API server.
KUBELET_PORT="${LAB_KUBELET_PORT:-20250}"

log() { printf 'lab: %s\n' "$*" >&2; }
die() { printf 'lab: %s\n' "$*" >&2; exit 1; }

# start NAME CMD... runs CMD in the background with its log and PID in STATE.
start() {
	local name="$1"; shift
	mkdir -p "$STATE/pids" "$STATE/logs"
	"$@" >"$STATE/logs/$name.log" 2>&1 &
	echo $! >"$STATE/pids/$name.pid"
}

# stop NAME stops a process started by start, and only that process.
stop() {
	local f="$STATE/pids/$1.pid" pid
	[[ -f $f ]] || return 0
	pid="$(cat "$f")"
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

# running NAME is true while the process started as NAME is alive.
running() { [[ -f $STATE/pids/$1.pid ]] && kill -0 "$(cat "$STATE/pids/$1.pid")" 2>/dev/null; }

# start_apiserver NAME PORT starts a kube-apiserver over the lab's etcd with
# the lab's certificates, serving on 127.0.0.1:PORT: up.sh's, and more beside
# it (apiserver.sh) that serve the same objects as other clusters would.
start_apiserver() {
	local pki="$STATE/pki" prefix=()
	# A third argument is an etcd prefix of its own: a cluster with nothing in it.
	[[ -n "${3:-}" ]] && prefix=(--etcd-prefix "$3")
	start "$1" "$BIN/kube-apiserver-$KUBERNETES_VERSION" \
		--etcd-servers "http://127.0.0.1:$ETCD_PORT" ${prefix[@]+"${prefix[@]}"} \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$2" \
		--endpoint-reconciler-type none \
		--tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--client-ca-file "$pki/ca.crt" \
		--requestheader-client-ca-file "$pki/ca.crt" --requestheader-allowed-names front-proxy-client \
		--requestheader-extra-headers-prefix X-Remote-Extra- --requestheader-group-headers X-Remote-Group \
		--requestheader-username-headers X-Remote-User \
		--proxy-client-cert-file "$pki/front-proxy.crt" --proxy-client-key-file "$pki/front-proxy.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
		--service-cluster-ip-range 10.96.0.0/16 --authorization-mode RBAC --allow-privileged \
		--kubelet-preferred-address-types InternalIP --kubelet-certificate-authority "$pki/ca.crt"
}

kc() { kubectl --kubeconfig "$KUBECONFIG_LAB" "$@"; }

# wait_for DESCRIPTION SECONDS CMD... polls CMD until it succeeds.
wait_for() {
	local what="$1" secs="$2"; shift 2
	local end=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || die "timed out after ${secs}s waiting for $what (logs in $STATE/logs)"
		sleep 0.2
	done
}
