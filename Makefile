# gpusched: build, test, bench, lint. The CUDA targets (cuda-deps, kernels,
# kernels-check, build-cuda) come from mk/cuda.mk.

GO ?= go

.PHONY: build test bench lint lint-cuda quickstart clean

# bin/gpusched, the simulator build (no CUDA needed); make build-cuda for the GPU build.
build:
	$(GO) build -o bin/gpusched ./cmd/gpusched

# Every package's tests; no GPU, no CUDA toolkit needed. cmd/gpusched and
# experiments simulate every committed result again (4-5 min each on a quiet
# 2-core machine): go test's default 10 min a package is too tight on a
# loaded one.
test:
	$(GO) test -timeout 30m ./...

# Benchmarks (simulator speed and others), no tests.
bench:
	$(GO) test -run '^$$' -bench . ./...

# golangci-lint, pinned: `make lint` installs this version into bin/ on first
# use (go install through the module proxy) and reinstalls when it changes.
GOLANGCI_LINT_VERSION = v2.15.0
GOLANGCI_LINT = bin/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	@mkdir -p bin/.golangci
	GOBIN=$(CURDIR)/bin/.golangci $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv bin/.golangci/golangci-lint $@

# go vet, gofmt and golangci-lint (.golangci.yml: funlen, gocognit, dupl,
# errcheck, staticcheck, revive, ...), as CI runs them. lint-cuda lints the
# CUDA backend too (build tag cuda; needs cuda.h: make cuda-deps).
lint: $(GOLANGCI_LINT)
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GOLANGCI_LINT) run ./...

lint-cuda: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run --build-tags cuda ./device/cuda/...

# The README's first command.
quickstart:
	$(GO) run ./cmd/gpusched run configs/experiments/quickstart.yaml

clean:
	rm -rf bin results

include mk/*.mk
