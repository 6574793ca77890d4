# gpusched: build, test, bench, lint. The CUDA targets (cuda-deps, kernels,
# kernels-check, build-cuda) come from mk/cuda.mk.

GO ?= go

.PHONY: build test bench lint quickstart clean

# bin/gpusched, the simulator build (no CUDA needed); make build-cuda for the GPU build.
build:
	$(GO) build -o bin/gpusched ./cmd/gpusched

# Every package's tests; no GPU, no CUDA toolkit needed.
test:
	$(GO) test ./...

# Benchmarks (simulator speed and others), no tests.
bench:
	$(GO) test -run '^$$' -bench . ./...

# go vet and gofmt, as CI runs them.
lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The README's first command.
quickstart:
	$(GO) run ./cmd/gpusched run configs/experiments/quickstart.yaml

clean:
	rm -rf bin results

include mk/*.mk
