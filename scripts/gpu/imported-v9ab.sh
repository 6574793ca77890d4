#!/bin/bash
# The eighth and ninth replay kernels on ONE GPU, interleaved (issue #19,
# the batch-1 floor), the replay kernel's profile points with each, and
# the held-out imports with the eighth. The eighth (replay) loads its
# descriptor's head and its lead lanes' pairs from replay.desc (a global
# round trip) before the sampled loads (a second); the ninth (replay_v9)
# reads the same words from 25 kernel parameters (constant cache), so that
# only the sampled loads stand between its start and its spin. From the
# repository root, with $OUT set and no Go toolchain:
#
#   1. `gpusched profile` (with the gate check, issue #18) of the imported
#      experiments (configs/experiments/imported-gpu.yaml,
#      imported-graph-gpu.yaml: the replay kernel's points in the profiles)
#      with each kernel's build, PROFILE_S seconds each (default 26: the
#      eighth's 3,487 points took 22 s in session 8 call 3; the ninth has
#      3,557):
#      profile/replay-v8.yaml, profile/replay-v9.yaml;
#   2. the held-out imports (configs/experiments/imported-heldout-v8-gpu.yaml,
#      imported-graph-heldout-v8-gpu.yaml: those of session 5, which ran
#      with the fourth kernel) replayed with the eighth at its measured
#      384/1215 (eager) and 160/927 (graph-replay traces):
#      imported-heldout-v8, imported-graph-heldout-v8;
#   3. workloads/file's GPU tests once (file.test: replay = v8, replayAlt =
#      replay_v9): TestGPUReplay and TestGPUReplayProbe (replay, replay_v9,
#      replay_bare);
#   4. ROUNDS times (default 3): the graph-replay traces (serial,
#      serial+graph) with the eighth (gpusched-v8, imported-graph-v8-gpu.yaml)
#      and the ninth (gpusched-v9, imported-graph-v9-gpu.yaml), both at the
#      eighth's 160/927, then the eager imports under serial and
#      serial+graph at 384/1215;
#   5. the ninth's own set at the values step 3 measured for it (its
#      "replay_v9 4 ranges:" and "replay_v9 signature:" lines).
#
# Everything lands in $OUT/import-v9ab.tgz (about 230 s on an H100; no
# step runs past LIMIT, default 290 s, less 15 s for the packing). With
# PROFILE_ONLY=1 only step 1 runs (about 60 s; for a second GPU kind).
# Binaries, built here from one commit (xz -9; the script unpacks them):
#
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import-v9/gpusched-v8 ./cmd/gpusched   # replay = v8
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/import-v9/file.test ./workloads/file
#   (branch import-v9default: ReplayKernel = replay_v9) go build ... -o .gpu/import-v9/gpusched-v9 ./cmd/gpusched
#   xz -9 .gpu/import-v9/gpusched-v8 .gpu/import-v9/gpusched-v9 .gpu/import-v9/file.test
#
# usage: B=.gpu/import-v9 [ROUNDS=3] [LIMIT=290] [PROFILE_S=26] [PROFILE_ONLY=1] bash scripts/gpu/imported-v9ab.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   steps 1, 2, 4 and 5 (step 3 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import-v9}
DEV=${1:-cuda}
LIMIT=${LIMIT:-290}
ROUNDS=${ROUNDS:-3}
PROFILE_S=${PROFILE_S:-26}
R=$OUT/import-v9ab
mkdir -p "$R/profile"
. scripts/gpu/imported-lib.sh
imported_unpack gpusched-v8 gpusched-v9
imported_build_txt
[ "$DEV" = cuda ] && imported_device_txt

for v in 8 9; do
	log "profile, replay kernel v$v"
	timeout $((PROFILE_S + 20)) "$B/gpusched-v$v" profile --device "$DEV" --max-sizes 1000000 --bind-bytes 1000000000000 \
		--budget 1000s --deadline "${PROFILE_S}s" -o "$R/profile/replay-v$v.yaml" \
		configs/experiments/imported-gpu.yaml configs/experiments/imported-graph-gpu.yaml \
		> "$R/profile/replay-v$v.txt" 2> "$R/profile/replay-v$v.log"
	echo "rc=$?" | tee -a "$R/profile/replay-v$v.log"
	tail -2 "$R/profile/replay-v$v.log"
done
if [ -n "${PROFILE_ONLY:-}" ]; then
	log done
	tar czf "$OUT/import-v9ab.tgz" -C "$OUT" import-v9ab && rm -rf "$R"
	exit 0
fi

run_one imported-heldout-v8 "$B/gpusched-v8" configs/experiments/imported-heldout-v8-gpu.yaml "384 1215" 50
run_one imported-graph-heldout-v8 "$B/gpusched-v8" configs/experiments/imported-graph-heldout-v8-gpu.yaml "160 927" 30

AB_BASE=8 AB_EAGER="384 1215" AB_GRAPH="160 927" imported_kernel_ab 9 "$B/gpusched-v9" replay_v9 "384 1215" "160 927" "$ROUNDS" 60
