#!/usr/bin/env bash
# Installs the plugin with real krew, built from the Go module proxy, the way
# an engineer would: check that plugins/krew.yaml is a template and that
# dist/krew.yaml (make dist fills it in) has the archives' real sums, validate
# dist/krew.yaml with krew's own validator, `kubectl krew install --manifest
# --archive` into a temporary KREW_ROOT, run it through kubectl's plugin
# discovery, exercise shell completion through kubectl, uninstall. Needs
# kubectl on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
KREW_VERSION=v0.4.3 # pinned here; krew is built like the lab's binaries
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
BIN="$PWD/test/lab/bin"
mkdir -p "$BIN"
fail() { echo "krew-test: FAIL: $*" >&2; exit 1; }

if [[ ! -x $BIN/krew-$KREW_VERSION || ! -x $BIN/validate-krew-manifest-$KREW_VERSION ]]; then
	w="$PWD/test/lab/.build/krew-$KREW_VERSION"
	mkdir -p "$w"
	printf 'module rolloutdoctor.lab/krew\n\ngo 1.24\n' >"$w/go.mod"
	(cd "$w" && GOFLAGS=-mod=mod go get "sigs.k8s.io/krew@$KREW_VERSION" >/dev/null 2>&1 &&
		GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$BIN/krew-$KREW_VERSION" sigs.k8s.io/krew/cmd/krew &&
		GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$BIN/validate-krew-manifest-$KREW_VERSION" sigs.k8s.io/krew/cmd/validate-krew-manifest)
fi
# Always the checkout's archives: ones left in dist/ by an earlier build
# would test an older binary.
hack/dist.sh

# plugins/krew.yaml is a template (placeholders, no sums); dist/krew.yaml has
# the real sum of each archive next to it.
grep -qF '{{SHA256 kubectl-rolloutdoctor_linux_amd64.tar.gz}}' plugins/krew.yaml ||
	fail "plugins/krew.yaml has no {{SHA256 …}} placeholder: it must stay a template"
! grep -qE '[0-9a-fA-F]{64}' plugins/krew.yaml || fail "plugins/krew.yaml carries a sha256 value: it must stay a template"
! grep -qF '{{' dist/krew.yaml || fail "dist/krew.yaml has placeholders left: $(grep -F '{{' dist/krew.yaml)"
n=0
while read -r uri sum; do
	a="dist/${uri##*/}"
	[[ -f $a ]] || fail "dist/krew.yaml names $a, which is not in dist/"
	real="$(sha256sum "$a" | cut -d' ' -f1)"
	[[ $sum == "$real" ]] || fail "dist/krew.yaml gives $a the sha256 $sum; the archive's is $real"
	n=$((n + 1))
done < <(awk '/^ *uri: /{u=$2} /^ *sha256: /{print u, $2}' dist/krew.yaml | tr -d '"')
archives=(dist/kubectl-rolloutdoctor_*.tar.gz)
[[ $n -eq ${#archives[@]} ]] || fail "dist/krew.yaml has $n platforms with a sum, dist/ has ${#archives[@]} archives"
echo "krew-test: plugins/krew.yaml is a template; dist/krew.yaml has the sums of the $n archives"
version="$(sed -n 's/^  version: //p' dist/krew.yaml | tr -d '"')"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export KREW_ROOT="$tmp/krew" KUBECONFIG="$tmp/no-kubeconfig"
mkdir -p "$tmp/tools"
ln -s "$BIN/krew-$KREW_VERSION" "$tmp/tools/kubectl-krew"
# Only krew's bin and kubectl: the plugin must come from krew, not from PATH.
export PATH="$KREW_ROOT/bin:$tmp/tools:$(dirname "$(command -v kubectl)"):/usr/bin:/bin"
command -v kubectl-rolloutdoctor >/dev/null && fail "kubectl-rolloutdoctor is already on PATH"

# krew's validator wants the file named after the plugin.
cp dist/krew.yaml "$tmp/rolloutdoctor.yaml"
"$BIN/validate-krew-manifest-$KREW_VERSION" -manifest "$tmp/rolloutdoctor.yaml" -skip-install ||
	fail "krew's validate-krew-manifest rejected the manifest"
echo "krew-test: manifest valid (validate-krew-manifest $KREW_VERSION)"

kubectl krew install --manifest="$tmp/rolloutdoctor.yaml" --archive=dist/kubectl-rolloutdoctor_linux_amd64.tar.gz
plugins="$(kubectl plugin list 2>/dev/null || true)"
grep -q "$KREW_ROOT/bin/kubectl-rolloutdoctor" <<<"$plugins" || fail "kubectl plugin list does not show the plugin: $plugins"
out="$(kubectl rolloutdoctor version)"
echo "$out"
grep -q "rolloutdoctor $version" <<<"$out" || fail "version does not print $version"
grep -q "models Argo Rollouts controller: v1.7.2 v1.8.2 v1.8.3 v1.9.3 v1.10.2" <<<"$out" || fail "version does not list the modeled controllers"

# A scan over several clusters runs each context's credential plugin through
# the installed binary (krew's symlink): what the plugin prints must reach
# the cluster's section. Nothing listens at the server: the plugin fails
# before a request is sent.
printf '#!/bin/sh\necho "Token for $1 has expired" >&2\nexit 255\n' >"$tmp/sso-login"
chmod +x "$tmp/sso-login"
cat >"$tmp/plugins.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: eu, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: "$tmp/sso-login", args: [prod-eu], interactiveMode: Never}}}]
contexts: [{name: prod-eu, context: {cluster: c, user: eu}}]
KC
out="$(kubectl rolloutdoctor scan --kubeconfig "$tmp/plugins.kubeconfig" --all-contexts --color never 2>&1 || true)"
grep -q 'failed (exit code 255): it printed "Token for prod-eu has expired"' <<<"$out" &&
	grep -q '^credential plugin of context prod-eu: Token for prod-eu has expired$' <<<"$out" ||
	fail "a credential plugin's words did not reach the scan through the installed binary: $out"
echo "krew-test: the installed binary relays credential plugins"

# Completion through kubectl: kubectl 1.26+ runs kubectl_complete-rolloutdoctor
# from PATH; the caveats tell the user to link it, and so does this test.
link="$(sed -n 's/^ *ln -sf //p' dist/krew.yaml)"
[[ -n $link ]] || fail "the caveats do not say how to link the completion helper"
eval "ln -sf $link"
comp="$(kubectl __complete rolloutdoctor "" 2>/dev/null)"
grep -q "^diagnose" <<<"$comp" && grep -q "^escape" <<<"$comp" || fail "kubectl completion of subcommands: $comp"
comp="$(kubectl __complete rolloutdoctor escape --d 2>/dev/null)"
grep -q -- "--do" <<<"$comp" && grep -q -- "--dry-run" <<<"$comp" || fail "kubectl completion of flags: $comp"
echo "krew-test: completion through kubectl works"

# krew's other commands want an initialized plugin index (normally a clone of
# krew-index from `kubectl krew update`). Offline, a local git repository with
# this manifest serves as the index, as a custom index would.
idx="$KREW_ROOT/index/default"
mkdir -p "$idx/plugins" && cp "$tmp/rolloutdoctor.yaml" "$idx/plugins/"
git -C "$idx" init -q && git -C "$idx" add -A &&
	git -C "$idx" -c user.email=ci@localhost -c user.name=ci commit -qm index
list="$(kubectl krew list 2>&1)"
grep -q rolloutdoctor <<<"$list" || fail "kubectl krew list does not show rolloutdoctor: $list"
kubectl krew uninstall rolloutdoctor
[[ ! -e $KREW_ROOT/bin/kubectl-rolloutdoctor ]] || fail "uninstall left the plugin behind"
echo "krew-test: PASS (install, version, plugin relay, completion, uninstall)"
