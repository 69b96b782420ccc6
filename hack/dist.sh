#!/usr/bin/env bash
# Builds the release archives for krew and direct download, reproducibly:
# -trimpath, no build ID, fixed file times and owners, sorted tar entries,
# gzip without a timestamp. Usage: hack/dist.sh [VERSION]
# Output in dist/: kubectl-rolloutdoctor_<os>_<arch>.tar.gz, sha256sums.txt,
# and krew.yaml (the plugins/krew.yaml template with version, uri and sha256
# filled in).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}" CGO_ENABLED=0 GOFLAGS=-buildvcs=false
VERSION="${1:-${VERSION:-v0.1.0}}"
COMMIT="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
# Timestamps come from the commit, so two builds of one commit are identical.
EPOCH="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
BASE_URL="${BASE_URL:-https://github.com/rolloutdoctor/rolloutdoctor/releases/download/$VERSION}"
# PLATFORMS=... builds a subset (CI builds one per OS) and writes a manifest
# for that subset; without it every platform of the template is built.
SUBSET="${PLATFORMS:+1}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"

rm -rf dist && mkdir -p dist/stage
ldflags="-s -w -buildid= -X github.com/rolloutdoctor/rolloutdoctor/pkg/cli.Version=$VERSION -X github.com/rolloutdoctor/rolloutdoctor/pkg/cli.Commit=$COMMIT"
for p in $PLATFORMS; do
	os="${p%/*}" arch="${p#*/}" ext=""
	[[ $os == windows ]] && ext=".exe"
	d="dist/stage/${os}_${arch}"
	mkdir -p "$d"
	GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "$ldflags" -o "$d/kubectl-rolloutdoctor$ext" ./cmd/kubectl-rolloutdoctor
	cp LICENSE "$d/"
	# kubectl (1.26+) completes `kubectl rolloutdoctor <TAB>` by running
	# kubectl_complete-rolloutdoctor from PATH; it asks the plugin itself.
	# The same helper make build and make install put next to the binary.
	if [[ $os == windows ]]; then
		cp hack/complete/kubectl_complete-rolloutdoctor.cmd "$d/"
		chmod 0644 "$d/kubectl_complete-rolloutdoctor.cmd"
	else
		cp hack/complete/kubectl_complete-rolloutdoctor "$d/"
		chmod 0755 "$d/kubectl_complete-rolloutdoctor"
	fi
	chmod 0755 "$d/kubectl-rolloutdoctor$ext"
	chmod 0644 "$d/LICENSE"
	find "$d" -exec touch -h -d "@$EPOCH" {} +
	tar --sort=name --mtime="@$EPOCH" --owner=0 --group=0 --numeric-owner -C "$d" -cf - . |
		gzip -n -9 >"dist/kubectl-rolloutdoctor_${os}_${arch}.tar.gz"
done
(cd dist && sha256sum kubectl-rolloutdoctor_*.tar.gz >sha256sums.txt)

# Fill in the plugins/krew.yaml template: {{VERSION}}, {{BASE_URL}} and each
# {{SHA256 ARCHIVE}} from sha256sums.txt. Fails on a placeholder left over,
# an archive the template names that was not built, or a sum that is not one.
python3 - "$VERSION" "$BASE_URL" "$SUBSET" <<'PY'
import re, sys
version, base, subset = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
sums = dict(reversed(l.split()) for l in open("dist/sha256sums.txt"))
def fail(msg):
    sys.exit("dist.sh: " + msg)
def sha(m):
    if m.group(1) not in sums:
        fail(f"plugins/krew.yaml names {m.group(1)}, which was not built (PLATFORMS?)")
    return sums[m.group(1)]
t = open("plugins/krew.yaml").read()
t = t[t.index("apiVersion:"):]  # the template's header comment says it is one
if subset:
    # Keep the platform entries whose archive was built.
    head, sep, plats = t.partition("\n  platforms:\n")
    blocks = re.split(r"(?m)^(?=  - selector:)", plats)
    keep = [b for b in blocks if b.strip() and all(a in sums for a in re.findall(r"\{\{SHA256 ([^}]+)\}\}", b))]
    if not keep:
        fail("PLATFORMS built no platform the template names")
    t = head + sep + "".join(keep)
out = re.sub(r"\{\{SHA256 ([^}]+)\}\}", sha, t).replace("{{VERSION}}", version).replace("{{BASE_URL}}", base)
if "{{" in out:
    fail("placeholders left in dist/krew.yaml: " + ", ".join(sorted(set(re.findall(r"\{\{[^}]*\}\}", out)))))
got = re.findall(r'^\s*sha256: "?([^"\s]*)"?$', out, re.M)
if not got or any(not re.fullmatch(r"[0-9a-f]{64}", g) or g == "0" * 64 for g in got):
    fail(f"dist/krew.yaml has sha256 values that are not sums: {got}")
open("dist/krew.yaml", "w").write(
    f"# krew plugin manifest for rolloutdoctor {version}, written by hack/dist.sh from\n"
    "# plugins/krew.yaml with the sha256 sums of the archives next to it.\n" + out)
PY
rm -rf dist/stage
echo "dist: $(ls dist | tr '\n' ' ')"
