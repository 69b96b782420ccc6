# rolloutdoctor build and test entry points. Argo Rollouts v1.10 API types
# declare go 1.26.10, so Go 1.27.3 is used; the go command fetches it from the
# module proxy the first time (stock laptops do this by themselves).
export GOTOOLCHAIN := go1.27.3
GO ?= go

.PHONY: build example test docs vet lab-build lab-up lab-down e2e dist krew-test
build:
	$(GO) build -o bin/kubectl-rolloutdoctor ./cmd/kubectl-rolloutdoctor

# Diagnose the bundled seed-incident snapshot (no cluster needed). Exit 1 means
# "findings at or above --fail-on", which is the point of the example.
example:
	$(GO) run ./cmd/kubectl-rolloutdoctor diagnose -f examples/incident-rollback-window.yaml || test $$? -eq 1

test:
	$(GO) vet ./...
	$(GO) test ./...

docs:
	$(GO) run ./cmd/kubectl-rolloutdoctor explain --markdown > docs/rules.md

# The real-cluster lab (test/lab): etcd, Kubernetes, kwok and one Argo Rollouts
# controller binary per version, all built from the Go module proxy.
lab-build:
	test/lab/build.sh

# LAB_CONTROLLER=v1.9.3 make lab-up picks the controller version.
lab-up: lab-build
	test/lab/up.sh

lab-down:
	test/lab/down.sh

# End-to-end suite against the real controllers; starts and stops its own lab,
# with every version's controller side by side (--instance-id), and runs up to
# 24 scenarios at once (all five versions' scenarios and the pods scenario take
# about 300 s on 2 cores). E2E_VERSIONS=v1.8.2,v1.10.2 restricts the versions
# (and skips docs/fidelity.md); E2E_PORT_BASE=21000 moves the lab's ports.
e2e: lab-build
	$(GO) test -tags e2e -count=1 -parallel 24 -timeout 60m -v ./test/e2e/

# Release archives for linux, darwin and windows on amd64 and arm64, their
# sha256 sums, and dist/krew.yaml. VERSION=v0.2.0 make dist
dist:
	hack/dist.sh $(VERSION)

# Install with real krew (built from the module proxy) into a temporary KREW_ROOT.
krew-test:
	hack/krew-test.sh
