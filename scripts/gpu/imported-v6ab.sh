#!/bin/bash
# The fourth and sixth replay kernels on ONE GPU, interleaved (issue #19).
# The fourth's blocks each spin their wave's share of the recorded
# duration from their own start, so a replayed kernel adds its own block
# dispatch and its turnaround between waves to recorded durations that
# already hold the original's (the batch-8 models' excess grows with the
# blocks a wave holds and the waves a kernel runs); the sixth counts every
# block's spin from the kernel's start (block 0's stamp). Written before
# the sixth was adopted (6315190): since then main's replay IS the sixth
# and replay_v4 the fourth, so a rerun needs binaries built as the
# header says from 24864af. A RECORD: replay_v4 and replay_v6 left
# workloads/kernels/replay.cu after 9c28089 (session 10), so no later
# commit builds either; session 7 call 6 (docs/results/gpu-runs.md) ran
# it with binaries of 24864af, on the tree of 1f53bca. From the
# repository root, with $OUT set and no Go toolchain:
#
#   1. workloads/file's GPU tests once (file.test, replay = v4 and
#      replay_v6 = the candidate): TestGPUReplay (outputs against the CPU
#      reference, both kernels) and TestGPUReplayProbe (replay, replay_v6,
#      replay_bare; the busy 3-wave shape is where the sixth should differ);
#   2. ROUNDS times (default 3): the graph-replay traces (serial,
#      serial+graph) with the fourth kernel (gpusched-v4,
#      imported-graph-v4-gpu.yaml) and the sixth (gpusched-v6,
#      imported-graph-v6-gpu.yaml), both at 160/863, then the eager imports
#      under serial and serial+graph only, both at 416/1119: the same
#      values, so that any difference is the kernels' own time;
#   3. the sixth kernel's own set at the values step 1 measured for it
#      (its "replay_v6 4 ranges:" and "replay_v6 signature:" lines; the
#      configs' values where the probe did not run): every scheduler, for
#      docs/results if it wins.
#
# Everything lands in $OUT/import-v6ab.tgz (about 110 s on an H100; no
# step runs past LIMIT, default 300 s, less 15 s for the packing).
# Binaries, built here at one commit (gzipped; the script unpacks them):
#
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import/gpusched-v4 ./cmd/gpusched           # replay = v4
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/import/file.test ./workloads/file
#   (ReplayKernel = replay_v6 in workloads/file/program.go) go build ... -o .gpu/import/gpusched-v6 ./cmd/gpusched
#   gzip -f .gpu/import/gpusched-v4 .gpu/import/gpusched-v6 .gpu/import/file.test
#
# usage: [ROUNDS=3] [LIMIT=300] bash scripts/gpu/imported-v6ab.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   steps 2 and 3 (step 1 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import}
DEV=${1:-cuda}
LIMIT=${LIMIT:-300}
ROUNDS=${ROUNDS:-3}
R=$OUT/import-v6ab
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack gpusched-v4 gpusched-v6
imported_build_txt

imported_kernel_ab 6 "$B/gpusched-v6" replay_v6 "416 1119" "160 863" "$ROUNDS" 90
