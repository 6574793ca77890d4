#!/bin/bash
# The seventh and eighth replay kernels on ONE GPU, interleaved (issue #19).
# The seventh (replay) lets only a block's first warp poll the global timer
# (the batch-8 models gained 2-7%) and loads its lead warp's 24 range
# pointers with the descriptor's head; the constant cache serves those one
# address after another, so its floor rose by ~200 ns and the batch-1
# models lost 1-4% (docs/results/raw/import-v7ab-h100.tgz). The eighth
# (replay_v8) loads a pointer per range the head names, after it, as the
# sixth did. From the repository root, with $OUT set and no Go toolchain:
#
#   1. workloads/file's GPU tests once (file.test: replay = v7, replayAlt =
#      replay_v8): TestGPUReplay and TestGPUReplayProbe (replay, replay_v8,
#      replay_bare);
#   2. ROUNDS times (default 3): the graph-replay traces (serial,
#      serial+graph) with the seventh (gpusched-v7,
#      imported-graph-v7-gpu.yaml) and the eighth (gpusched-v8,
#      imported-graph-v8-gpu.yaml), both at the seventh's measured
#      160/1151, then the eager imports under serial and serial+graph at
#      384/1407: the same values, so that any difference is the kernels';
#   3. the eighth's own set at the values step 1 measured for it (its
#      "replay_v8 4 ranges:" and "replay_v8 signature:" lines).
#
# A RECORD: replay_v7 (the seventh, its baseline) left
# workloads/kernels/replay.cu after 9c28089 (session 10), so no later
# commit builds gpusched-v7; session 8 call 4 (docs/results/gpu-runs.md)
# ran it with gpusched-v7 and file.test built at bd9d3f6 and gpusched-v8
# the same with ReplayKernel = replay_v8, on the tree of 851e376.
#
# Everything lands in $OUT/import-v8ab.tgz (about 100 s on an H100; no
# step runs past LIMIT, default 300 s, less 15 s for the packing).
# Binaries, built here from one commit (xz -9; the script unpacks them):
#
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import-v8/gpusched-v7 ./cmd/gpusched   # replay = v7
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/import-v8/file.test ./workloads/file
#   (branch import-v8default: ReplayKernel = replay_v8) go build ... -o .gpu/import-v8/gpusched-v8 ./cmd/gpusched
#   xz -9 .gpu/import-v8/gpusched-v7 .gpu/import-v8/gpusched-v8 .gpu/import-v8/file.test
#
# usage: B=.gpu/import-v8 [ROUNDS=3] [LIMIT=300] bash scripts/gpu/imported-v8ab.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   steps 2 and 3 (step 1 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import-v8}
DEV=${1:-cuda}
LIMIT=${LIMIT:-300}
ROUNDS=${ROUNDS:-3}
R=$OUT/import-v8ab
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack gpusched-v7 gpusched-v8
imported_build_txt

AB_BASE=7 AB_EAGER="384 1407" AB_GRAPH="160 1151" imported_kernel_ab 8 "$B/gpusched-v8" replay_v8 "384 1215" "160 927" "$ROUNDS" 90
