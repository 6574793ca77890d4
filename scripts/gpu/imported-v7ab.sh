#!/bin/bash
# The sixth and seventh replay kernels on ONE GPU, interleaved (issue #19),
# and the profile's check for host-starved samples (issue #18).
# The sixth (replay) spins every block's wave share from the kernel's
# start with every warp polling the global timer; at 64 warps an SM
# (16 blocks of 128 threads, the batch-8 CNNs' common shape) a kernel ends
# 1.2 us beyond its spin in one wave, 0.4-0.5 us at 32 warps an SM. The
# seventh (replay_v7) lets only a block's first warp poll while the others
# wait at a barrier, and its lead warp loads its ranges' pointers with the
# descriptor's head (the batch-1 floor). From the repository root, with
# $OUT set and no Go toolchain:
#
#   1. `gpusched profile` of the imported models (configs/experiments/
#      imported-gpu.yaml, imported-graph-gpu.yaml: the replay kernel's
#      3,487 points, 110 of which differed by more than 10% between two
#      H100 profiles, docs/results/raw/profile-all-h100*.tgz) twice, each
#      stopped at PROFILE_S (default 22 s): profile-check/run{1,2}.yaml and
#      logs, whose last lines count the samples taken again behind a
#      longer gate; scripts/gpu/profile-spread.py compares the two runs;
#   2. workloads/file's GPU tests once (file.test: replay = v6, replayAlt
#      = replay_v7): TestGPUReplay (outputs against the CPU reference, both
#      kernels at overhead_ns 0 and 416, the 16-blocks-an-SM shapes) and
#      TestGPUReplayProbe (replay, replay_v7, replay_bare);
#   3. ROUNDS times (default 3): the graph-replay traces (serial,
#      serial+graph) with the sixth (gpusched-v6, imported-graph-v6-gpu.yaml)
#      and the seventh (gpusched-v7, imported-graph-v7-gpu.yaml), both at
#      the sixth's measured 160/927, then the eager imports under serial and
#      serial+graph at 384/1215: the same values, so that any difference is
#      the kernels' own time;
#   4. the seventh's own set at the values step 2 measured for it (its
#      "replay_v7 4 ranges:" and "replay_v7 signature:" lines).
#
# A RECORD: replay_v6 and replay_v7 left workloads/kernels/replay.cu after
# 9c28089 (session 10), so no later commit builds the binaries below;
# session 8 call 3 (docs/results/gpu-runs.md) ran it with gpusched-v6 and
# file.test built at f5bf6c4 and gpusched-v7 the same with ReplayKernel =
# replay_v7, on the tree of 20c4ce5 with this script's own version
# (git log -- scripts/gpu/imported-v7ab.sh).
#
# Everything lands in $OUT/import-v7ab.tgz (about 140 s on an H100; no
# step runs past LIMIT, default 300 s, less 15 s for the packing).
# Binaries, built here from one commit (xz -9; the script unpacks them):
#
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import-v7/gpusched-v6 ./cmd/gpusched   # replay = v6
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/import-v7/file.test ./workloads/file
#   (branch import-v7default: ReplayKernel = replay_v7) go build ... -o .gpu/import-v7/gpusched-v7 ./cmd/gpusched
#   xz -9 .gpu/import-v7/gpusched-v6 .gpu/import-v7/gpusched-v7 .gpu/import-v7/file.test
#
# usage: B=.gpu/import-v7 [ROUNDS=3] [LIMIT=300] [PROFILE_S=22] bash scripts/gpu/imported-v7ab.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   steps 1, 3 and 4 (step 2 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import-v7}
DEV=${1:-cuda}
LIMIT=${LIMIT:-300}
ROUNDS=${ROUNDS:-3}
PROFILE_S=${PROFILE_S:-22}
R=$OUT/import-v7ab
mkdir -p "$R/profile-check"
. scripts/gpu/imported-lib.sh
imported_unpack gpusched-v6 gpusched-v7
imported_build_txt

for run in 1 2; do
	log "profile check, run $run"
	timeout $((PROFILE_S + 20)) "$B/gpusched-v6" profile --device "$DEV" --max-sizes 1000000 --bind-bytes 1000000000000 \
		--budget 1000s --deadline "${PROFILE_S}s" -o "$R/profile-check/run$run.yaml" \
		configs/experiments/imported-gpu.yaml configs/experiments/imported-graph-gpu.yaml \
		> /dev/null 2> "$R/profile-check/run$run.log"
	echo "rc=$?" | tee -a "$R/profile-check/run$run.log"
	tail -2 "$R/profile-check/run$run.log"
done
python3 scripts/gpu/profile-spread.py "$R/profile-check/run1.yaml" "$R/profile-check/run2.yaml" 2>&1 | tee "$R/profile-check/spread.txt"

AB_BASE=6 AB_EAGER="384 1215" AB_GRAPH="160 927" imported_kernel_ab 7 "$B/gpusched-v7" replay_v7 "384 1215" "160 927" "$ROUNDS" 90
