# CUDA targets: toolkit set-up, kernel images, the cuda-tagged binary.
# Included by the top-level Makefile (include mk/*.mk).

# nvcc: on PATH, else a normal CUDA install.
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })

.PHONY: cuda-deps kernels kernels-check build-cuda

# Installs nvcc, cuda.h and libcuda.so (Debian: nvidia-cuda-toolkit from
# non-free); does nothing where nvcc exists.
cuda-deps:
	sh mk/cuda-deps.sh

# Compiles workloads/kernels/*.cu into committed fat binaries and writes
# their Go descriptors (workloads/kernels/zz_generated.go).
kernels:
	@test -n "$(NVCC)" || { echo "nvcc not found: run 'make cuda-deps'" >&2; exit 1; }
	NVCC=$(NVCC) go run ./workloads/kernels/gen -dir workloads/kernels

# Verifies that the committed images and descriptors match their sources.
kernels-check:
	@test -n "$(NVCC)" || { echo "nvcc not found: run 'make cuda-deps'" >&2; exit 1; }
	NVCC=$(NVCC) go run ./workloads/kernels/gen -dir workloads/kernels -check

# bin/gpusched with the CUDA backend (needs cuda.h and libcuda.so: make cuda-deps).
build-cuda:
	go build -tags cuda -o bin/gpusched ./cmd/gpusched
