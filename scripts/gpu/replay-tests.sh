#!/bin/bash
# workloads/file's GPU tests of the replay kernels (issue #19), alone: a
# check that a change to workloads/kernels/replay.cu or workloads/file left
# the kernels working on a GPU. From the repository root, with $OUT set and
# no Go toolchain:
#
#   TestGPUReplay (the replay kernel and replayAlt = replay_v8, at
#   overhead_ns 0 and 416: outputs against the CPU reference under serial
#   and round-robin, changed by a schedule without the dependencies) and
#   TestGPUReplayProbe (replay, replay_v8, replay_bare: the global timer's
#   step, floor and overhead per kernel and per range, the "measured:" and
#   "replay signature:" lines), COUNT times (default 1).
#
# Everything lands in $OUT/replay-tests.tgz: build.txt (the binary's
# commit), device.txt (nvidia-smi), replay-test.log (-test.v, rc=N last).
# Under 10 s on an H100 (docs/results/raw/import-v9ab-h100.tgz:
# TestGPUReplay 0.53 s, TestGPUReplayProbe 0.32 s, beside CUDA's start);
# the tests stop at LIMIT (default 120 s). The binary, built here (xz -9; the
# script unpacks it):
#
#   mkdir -p .gpu/replay
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/replay/file.test ./workloads/file
#   xz -9 .gpu/replay/file.test; git log -1 --format='%H %s' > .gpu/replay/commit.txt
#
# usage: B=.gpu/replay [COUNT=1] [LIMIT=120] bash scripts/gpu/replay-tests.sh
#   Without a GPU the tests skip (cudatest.Open says why) and the log says so.
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/replay}
LIMIT=${LIMIT:-120}
COUNT=${COUNT:-1}
R=$OUT/replay-tests
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack file.test
imported_build_txt
imported_device_txt
imported_replay_tests "$LIMIT" -test.count "$COUNT"
grep -E 'globaltimer|signature:|4 ranges:|measured|--- |^ok|^FAIL|SKIP|rc=' "$R/replay-test.log"
log done
tar czf "$OUT/replay-tests.tgz" -C "$OUT" replay-tests && rm -rf "$R"
