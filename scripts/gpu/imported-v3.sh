#!/bin/bash
# The imported PyTorch models (issue #19) replayed on the GPU with the
# replay kernel's third version, from the repository root, with $OUT set and
# no Go toolchain:
#
#   1. workloads/file's GPU tests (cuda tag), once: TestGPUReplay (outputs
#      against the CPU reference) and TestGPUReplayProbe (the kernel's floor
#      and overhead per shape, beside replay_v2's), a check that the values
#      the experiments use (measured by scripts/gpu/imported-probe.sh on the
#      same kind of GPU) still hold;
#   2. configs/experiments/imported-v3-gpu.yaml (every eager import under
#      serial, serial+graph and the multi-stream strategies),
#      imported-graph-v3-gpu.yaml (the graph-replay traces, serial and
#      serial+graph) and imported-graph-v3-gpu-o0.yaml (the same at
#      overhead_ns 0), as committed: the simulator's rows of the same
#      experiments (imported-v3-sim.yaml, imported-graph-v3-sim.yaml,
#      imported-graph-v3-sim-o0.yaml) were committed before this ran.
#
# Everything lands in $OUT/import-v3.tgz (about 45 s on an H100; at most
# 150 s: the timeouts).
# Binaries, built here (gzipped; the script unpacks them):
#
#   mkdir -p .gpu/import
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import/gpusched ./cmd/gpusched
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/import/file.test ./workloads/file
#   gzip -f .gpu/import/gpusched .gpu/import/file.test; git log -1 --format='%H %s' > .gpu/import/commit.txt
#
# With FROM_PROBE=1 the experiments run instead at the values step 1
# measures (eager imports: its "measured:" line, 4 ranges; graph-replay
# traces: its "replay signature:" line), written into copies of the
# configs with sed, for a run whose simulator rows could not be made first.
#
# usage: [FROM_PROBE=1] bash scripts/gpu/imported-v3.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   step 2 (step 1 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import}
DEV=${1:-cuda}
R=$OUT/import-v3
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
# At most 150 s in all: the eager imports (11 schedulers) take the most.
imported_kernel_run 3 30 75 20
