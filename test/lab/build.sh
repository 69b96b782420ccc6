#!/usr/bin/env bash
# Builds the lab's binaries from the Go module proxy only:
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok,
#   one Argo Rollouts controller per version in CONTROLLER_VERSIONS, and the
#   official kubectl-argo-rollouts plugin of PLUGIN_VERSION (the e2e's
#   analysis scenarios promote with it; make bench compares with it).
# Binaries carry their version in their file name, so a second run with
# nothing changed only checks that they exist. Usage: test/lab/build.sh [component...]
# where a component is etcd, kube, kwok, plugin (kubectl-argo-rollouts) or a
# controller version (v1.8.2).
set -euo pipefail
LAB="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
. "$LAB/versions.env"
export GOTOOLCHAIN="$LAB_GOTOOLCHAIN" GOFLAGS=-mod=mod CGO_ENABLED=0
BIN="$LAB/bin" BUILD="$LAB/.build"
mkdir -p "$BIN" "$BUILD"

log() { printf 'lab-build: %s\n' "$*" >&2; }

# moddir MODULE@VERSION prints the module's directory in the module cache,
# downloading it through the proxy if needed.
moddir() {
	go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}

# wrapper DIR MODULE-PATH writes an empty main module that only requires
# dependencies; `go build PKG` inside it then resolves them with -mod=mod.
wrapper() {
	mkdir -p "$1"
	printf 'module rolloutdoctor.lab/%s\n\ngo 1.24\n' "$2" >"$1/go.mod"
	: >"$1/go.sum"
}

build_etcd() {
	local out="$BIN/etcd-$ETCD_VERSION"
	[[ -x $out ]] && return
	log "etcd $ETCD_VERSION"
	local w="$BUILD/etcd-$ETCD_VERSION"
	wrapper "$w" etcd
	(cd "$w" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1 &&
		go build -trimpath -ldflags=-s\ -w -o "$out.tmp" go.etcd.io/etcd/server/v3)
	mv "$out.tmp" "$out"
}

build_kube() {
	local v="$KUBERNETES_VERSION"
	if [[ -x $BIN/kube-apiserver-$v && -x $BIN/kube-controller-manager-$v && -x $BIN/kube-scheduler-$v ]]; then
		return
	fi
	log "kube-apiserver, kube-controller-manager, kube-scheduler $v"
	local w="$BUILD/kubernetes-$v" src staging="v0${v#v1}"
	wrapper "$w" kubernetes
	src="$(moddir "k8s.io/kubernetes@$v")"
	# k8s.io/kubernetes replaces its staging modules with local paths, which a
	# dependent module cannot use: point each at its published v0.x release.
	{
		printf '\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$v"
		sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p' "$src/go.mod"
		printf ')\n'
	} >>"$w/go.mod"
	local x="-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/client-go/pkg/version.gitVersion=$v"
	local major minor
	major="${v#v}" major="${major%%.*}" minor="${v#v*.}" minor="${minor%%.*}"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		x+=" -X $p.gitMajor=$major -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
	done
	mkdir -p "$w/out"
	(cd "$w" && go build -trimpath -ldflags="-s -w $x" -o out/ \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler)
	for c in kube-apiserver kube-controller-manager kube-scheduler; do
		mv "$w/out/$c" "$BIN/$c-$v"
	done
}

build_kwok() {
	local out="$BIN/kwok-$KWOK_VERSION"
	[[ -x $out && -d $BIN/kwok-stages-$KWOK_VERSION && -d $BIN/kwok-crds-$KWOK_VERSION ]] && return
	log "kwok $KWOK_VERSION"
	local w="$BUILD/kwok-$KWOK_VERSION" src
	if [[ ! -x $out ]]; then
		wrapper "$w" kwok
		(cd "$w" && go get "sigs.k8s.io/kwok@$KWOK_VERSION" >/dev/null 2>&1 &&
			go build -trimpath -ldflags=-s\ -w -o "$out.tmp" sigs.k8s.io/kwok/cmd/kwok)
		mv "$out.tmp" "$out"
	fi
	# kwok has no stages built in: keep upstream's next to the binary. The
	# "general" pod stages delay each pod's start and readiness by 1 s plus up to
	# 5 s of jitter (tunable per pod by annotation), so ramps take real time.
	src="$(moddir "sigs.k8s.io/kwok@$KWOK_VERSION")"
	rm -rf "$BIN/kwok-stages-$KWOK_VERSION.tmp" && mkdir -p "$BIN/kwok-stages-$KWOK_VERSION.tmp"
	cp "$src/kustomize/stage/node/fast/node-initialize.yaml" \
		"$src/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml" \
		"$src"/kustomize/stage/pod/general/pod-*.yaml \
		"$BIN/kwok-stages-$KWOK_VERSION.tmp/"
	chmod -R u+w "$BIN/kwok-stages-$KWOK_VERSION.tmp"
	rm -rf "$BIN/kwok-stages-$KWOK_VERSION"
	mv "$BIN/kwok-stages-$KWOK_VERSION.tmp" "$BIN/kwok-stages-$KWOK_VERSION"
	# kwok's Logs CRD: each controller's Deployment pod gets a Logs object that
	# points its container at the controller's log, so the API server's
	# pods/log (served by kwok as the pod's "kubelet") returns it.
	rm -rf "$BIN/kwok-crds-$KWOK_VERSION.tmp" && mkdir -p "$BIN/kwok-crds-$KWOK_VERSION.tmp"
	cp "$src/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml" "$BIN/kwok-crds-$KWOK_VERSION.tmp/"
	chmod -R u+w "$BIN/kwok-crds-$KWOK_VERSION.tmp"
	mv "$BIN/kwok-crds-$KWOK_VERSION.tmp" "$BIN/kwok-crds-$KWOK_VERSION"
}

# build_controller VERSION builds the rollouts controller from a copy of the
# released module. The copy lives under .build (never in the repository); the
# only edit is the metrics/healthz listen address, which upstream hard-codes to
# 0.0.0.0 and the lab must keep on loopback.
build_controller() {
	local v="$1" out="$BIN/rollouts-controller-$1" src
	[[ -x $out && -d $BIN/crds-$v ]] && return
	src="$(moddir "github.com/argoproj/argo-rollouts@$v")"
	# The CRDs the controller version ships; lab-up applies the newest.
	rm -rf "$BIN/crds-$v" && mkdir -p "$BIN/crds-$v" && cp "$src"/manifests/crds/*-crd.yaml "$BIN/crds-$v/"
	chmod -R u+w "$BIN/crds-$v"
	[[ -x $out ]] && return
	log "argo-rollouts controller $v"
	local w="$BUILD/argo-rollouts-$v"
	rm -rf "$w" && cp -r "$src" "$w" && chmod -R u+w "$w"
	sed -i 's#listenAddr\( *\)= "0.0.0.0:%d"#listenAddr\1= "127.0.0.1:%d"#' "$w/controller/controller.go"
	grep -q '"127.0.0.1:%d"' "$w/controller/controller.go" || {
		log "controller $v: listen address not found in controller/controller.go"
		exit 1
	}
	(cd "$w" && go build -trimpath \
		-ldflags="-s -w -X github.com/argoproj/argo-rollouts/utils/version.version=${v#v}" \
		-o "$out.tmp" ./cmd/rollouts-controller)
	mv "$out.tmp" "$out"
}

# build_plugin VERSION builds the official kubectl-argo-rollouts plugin from the
# released module, unchanged, for the e2e and the side-by-side benchmark. Its
# dashboard embeds server/static, which the module holds empty (.gitkeep only):
# the plugin builds as upstream's `make plugin` would without the UI.
build_plugin() {
	local v="$1" out="$BIN/kubectl-argo-rollouts-$1" src
	[[ -x $out ]] && return
	log "kubectl-argo-rollouts $v"
	src="$(moddir "github.com/argoproj/argo-rollouts@$v")"
	(cd "$src" && go build -trimpath \
		-ldflags="-s -w -X github.com/argoproj/argo-rollouts/utils/version.version=${v#v}" \
		-o "$out.tmp" ./cmd/kubectl-argo-rollouts)
	mv "$out.tmp" "$out"
}

build_one() {
	case "$1" in
	etcd) build_etcd ;;
	kube) build_kube ;;
	kwok) build_kwok ;;
	plugin) build_plugin "$PLUGIN_VERSION" ;;
	v*) build_controller "$1" ;;
	esac
}

targets=("$@")
((${#targets[@]})) || targets=(etcd kube kwok $CONTROLLER_VERSIONS plugin)
# Jobs of components that share most of their packages: the controllers of
# one minor version (v1.8.2, v1.8.3), and the plugin with the controller of
# its version. A job builds its components one after another, so no package
# is compiled twice at the same time.
declare -A job_of=()
jobs=()
for t in "${targets[@]}"; do
	case "$t" in
	etcd | kube | kwok) key="$t" ;;
	plugin) key="${PLUGIN_VERSION%.*}" ;;
	v*) key="${t%.*}" ;;
	*) log "unknown component $t (etcd, kube, kwok, plugin or a controller version)" && exit 2 ;;
	esac
	if [[ -z ${job_of[$key]+set} ]]; then
		job_of[$key]=${#jobs[@]}
		jobs+=("$t")
	else
		jobs[${job_of[$key]}]+=" $t"
	fi
done
# Two jobs at a time: one go build leaves a core idle while it links a
# binary or waits on a package the rest need. A failed job stops no other;
# the script fails once all have ended.
running=0 failed=0
for j in "${jobs[@]}"; do
	if ((running == 2)); then
		wait -n || failed=1
		running=$((running - 1))
	fi
	(for t in $j; do build_one "$t"; done) &
	running=$((running + 1))
done
while ((running > 0)); do
	wait -n || failed=1
	running=$((running - 1))
done
((failed == 0)) || { log "a build failed (its output is above)"; exit 1; }
log "binaries in $BIN"
