#!/bin/sh
# CI step for the CUDA side (called from .ci/run): installs the toolkit if
# nvcc is missing, vets every package with the cuda build tag, lints the
# CUDA backend, and checks that the committed kernel images and descriptors
# match their sources.
set -eu
cd "$(dirname "$0")/.."

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
	make cuda-deps
fi
echo "== go vet -tags cuda ./..."
go vet -tags cuda ./...
echo "== golangci-lint on the CUDA backend"
make lint-cuda
echo "== kernel images against their sources"
make kernels-check
