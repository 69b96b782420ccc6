# rolloutdoctor build and test entry points. Argo Rollouts v1.10 API types
# declare go 1.26.10, so Go 1.27.3 is used; the go command fetches it from the
# module proxy the first time (stock laptops do this by themselves).
export GOTOOLCHAIN := go1.27.3
GO ?= go

.PHONY: build example test docs vet
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
