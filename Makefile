# rolloutdoctor build and test entry points. Argo Rollouts v1.10 API types
# declare go 1.26.10, so Go 1.27.3 is used; the go command fetches it from the
# module proxy the first time (stock laptops do this by themselves).
export GOTOOLCHAIN := go1.27.3
GO ?= go

# `version` prints these (pkg/cli.Version and pkg/cli.Commit, as hack/dist.sh
# stamps releases). VERSION=v0.2.0 overrides the version; outside a git
# checkout they stay "dev" and "unknown".
BUILD_VERSION := $(or $(VERSION),$(shell git describe --tags --always --dirty 2>/dev/null),dev)
BUILD_COMMIT := $(or $(shell git rev-parse HEAD 2>/dev/null),unknown)
LDFLAGS := -X github.com/rolloutdoctor/rolloutdoctor/pkg/cli.Version=$(BUILD_VERSION) -X github.com/rolloutdoctor/rolloutdoctor/pkg/cli.Commit=$(BUILD_COMMIT)

.PHONY: build install example test fuzz docs vet lab-build lab-up lab-down e2e bench bench-short dist krew-test
# bin/kubectl-rolloutdoctor and, next to it, the helper kubectl (1.26+) runs
# from PATH to complete `kubectl rolloutdoctor <TAB>`.
build:
	@test -x bin/kubectl-rolloutdoctor || echo "first build: downloads Go 1.27.3 and modules, several minutes on 2 cores (only \"go: downloading\" lines meanwhile)"
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/kubectl-rolloutdoctor ./cmd/kubectl-rolloutdoctor
	cp hack/complete/kubectl_complete-rolloutdoctor bin/

# Both into $(GOBIN) (go env GOBIN), else ~/.local/bin; BINDIR=DIR picks another.
# kubectl finds plugins on PATH only.
BINDIR ?= $(or $(shell $(GO) env GOBIN),$(HOME)/.local/bin)
install: build
	mkdir -p '$(BINDIR)'
	install -m 0755 bin/kubectl-rolloutdoctor bin/kubectl_complete-rolloutdoctor '$(BINDIR)/'
	@echo "installed kubectl-rolloutdoctor and kubectl_complete-rolloutdoctor in $(BINDIR)"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "note: $(BINDIR) is not on PATH: add it, or kubectl will not find the plugin";; esac

# Diagnose the bundled rollback-incident snapshot (no cluster needed). The
# binary exits 1 for "findings at or above --fail-on", which is the point of
# the example: make succeeds then, and fails on any other exit code.
example: build
	@bin/kubectl-rolloutdoctor diagnose -f examples/incident-rollback-window.yaml; rc=$$?; \
	case $$rc in \
	1) echo "exit 1: findings at or above --fail-on (the point of the example)";; \
	0) echo "exit 0: no findings, but this example has critical ones" >&2; exit 1;; \
	*) echo "exit $$rc: diagnose failed" >&2; exit $$rc;; \
	esac

test:
	$(GO) vet ./...
	$(GO) test ./...
	GOEXPERIMENT=nojsonv2 $(GO) build ./internal/fastjson

# Every fuzzer for a short time (FUZZTIME seconds each, default 15), as CI.
fuzz:
	hack/fuzz.sh

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
# 24 scenarios at once (all five versions' 235 scenario runs take about 760 s
# on 2 cores). E2E_VERSIONS=v1.8.2,v1.10.2 restricts the versions
# (and skips docs/fidelity.md); E2E_PORT_BASE=21000 moves the lab's ports.
e2e: lab-build
	$(GO) test -tags e2e -count=1 -parallel 24 -timeout 60m -v ./test/e2e/

# rolloutdoctor side by side with the official kubectl-argo-rollouts plugin
# (built from the argo-rollouts module) on a fleet the real controller
# reconciled in the lab: 1,000 Rollouts / 20,000 pods, 10 interleaved runs
# per case; writes its table into docs/performance.md and the profiles of
# each case into bench-out/. About 15 minutes on 2 cores.
bench: lab-build
	$(GO) run ./test/bench -write docs/performance.md

# The CI form: 100 Rollouts, 3 runs per case, nothing written (about 3 minutes).
bench-short: lab-build
	$(GO) run ./test/bench -short

# Release archives for linux, darwin and windows on amd64 and arm64, their
# sha256 sums, and dist/krew.yaml. VERSION=v0.2.0 make dist
dist:
	hack/dist.sh $(VERSION)

# Install with real krew (built from the module proxy) into a temporary KREW_ROOT.
krew-test:
	hack/krew-test.sh
