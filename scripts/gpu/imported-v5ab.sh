#!/bin/bash
# The fourth and fifth replay kernels on ONE GPU, interleaved (issue #19):
# the fourth (session 5) was faster than the third at batch 1 and slower
# at batch 8 on one H100 (raw/imported-ab-h100.tgz). It spills (ptxas:
# 40-byte stack) and its lead warp reloads its range's pointer and count
# from local memory after the spin; the fifth keeps them in registers (no
# stack). From the repository root, with $OUT set and no Go toolchain:
#
#   1. workloads/file's GPU tests once (file.test of the fifth kernel's
#      build): TestGPUReplay (its outputs against the CPU reference) and
#      TestGPUReplayProbe (replay = v5, replay_v4, replay_bare; a
#      signature and 1-8 ranges at one block, a block per SM, and 4 ranges
#      at 4 blocks an SM with padded shared memory in 1 and 3 waves,
#      spinning 40 us a wave);
#   2. twice: the graph-replay traces (serial, serial+graph) with the
#      fourth kernel (gpusched-v4, imported-graph-v4-gpu.yaml) and the
#      fifth (gpusched, imported-graph-v5-gpu.yaml), both at the fourth's
#      measured 160/863, then the eager imports under serial and
#      serial+graph only, both at 416/1119: the same values, so that any
#      difference is the kernels' own time;
#   3. the fifth kernel's own set at the values step 1 measured for it
#      (its "measured:" line for imported-v5, "replay signature:" for
#      imported-graph-v5 and, at overhead_ns 0, imported-graph-v5-o0;
#      the configs' estimates where the probe did not run): every
#      scheduler, for docs/results if it becomes the default.
#
# Everything lands in $OUT/import-v5ab.tgz (about 160 s on an H100; no
# step runs past LIMIT, default 400 s, less 15 s for the packing).
# Binaries, built here (gzipped; the script unpacks them):
#
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import-v5/gpusched-v4 ./cmd/gpusched     # main (replay = v4)
#   (in a checkout where replay = v5) go build -tags cuda -ldflags='-s -w' -o .../.gpu/import-v5/gpusched ./cmd/gpusched
#   (same checkout) go test -c -tags cuda -ldflags='-s -w' -o .../.gpu/import-v5/file.test ./workloads/file
#   gzip -f .gpu/import-v5/gpusched .gpu/import-v5/gpusched-v4 .gpu/import-v5/file.test
#
# usage: [LIMIT=400] bash scripts/gpu/imported-v5ab.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   steps 2 and 3 (step 1 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import-v5}
DEV=${1:-cuda}
LIMIT=${LIMIT:-400}
R=$OUT/import-v5ab
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack gpusched gpusched-v4
imported_build_txt

imported_kernel_ab 5 "$B/gpusched" replay "384 1088" "128 832" 2 120
