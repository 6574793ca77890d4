#!/usr/bin/env bash
# When SET-batch's completion callbacks run (issue #18, session 30): in
# session 28's timelines a chunk's host function holds its stream 43-150 us
# on four workers (the simulator: its wake, run and release, 48 us), and
# the dispatch loop learns of a finished chunk 20-90 us after it ends. The
# CUDA backend's timelines now draw each callback's run on the driver's
# callback thread (pid 4, as the simulator does), so the delay splits into
# the wake (stream reaches it -> run), the run, and the release (run ->
# stream goes on). One lease:
#  1. device/cuda's TestTraceTimeline (the callback lane's test), from a
#     carried test binary;
#  2. configs/experiments/set-batch-concurrency-gpu.yaml, plain, then with
#     --timelines;
#  3. configs/experiments/chunk-graph-gpu.yaml with --timelines (SET-batch on
#     two workers and the whole-pipeline graphs).
#
# Build here:
#   mkdir -p .gpu/cb && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/cb/gpusched ./cmd/gpusched
#   go test -c -tags cuda -trimpath -o .gpu/cb/cuda.test ./device/cuda
#   git log -1 --format='%H %s' > .gpu/cb/BUILD; xz -9 -f .gpu/cb/gpusched .gpu/cb/cuda.test
# There, from the repository root, carrying .gpu/cb:
#   OUT=$OUT bash scripts/gpu/callbackthread.sh
# Comes back: $OUT/cb-<gpu>.txz with device.txt, BUILD, the test's log, and
# each run's results (timelines under tl/ and cgtl/), stdout and stderr.
set -uo pipefail

RUN_TIMEOUT=${RUN_TIMEOUT:-240}
TAG=cb
. scripts/gpu/lease.sh
T=.gpu/cb/cuda.test
[ -x "$T" ] || { [ -f "$T.xz" ] && xz -dk "$T.xz"; }
chmod +x "$T"
(cd device/cuda && timeout 120 "../../$T" -test.run 'TestTraceTimeline' -test.v) > "$W/test.log" 2>&1; echo "test rc=$?" >> "$W/rc.txt"
SBC=configs/experiments/set-batch-concurrency-gpu.yaml
timeout "$RUN_TIMEOUT" "$BIN" run "$SBC" -o "$W/plain" > "$W/plain.stdout" 2> "$W/plain.stderr"; echo "plain rc=$?" >> "$W/rc.txt"
timeout "$RUN_TIMEOUT" "$BIN" run "$SBC" -o "$W/tl" --timelines > "$W/tl.stdout" 2> "$W/tl.stderr"; echo "tl rc=$?" >> "$W/rc.txt"
timeout "$RUN_TIMEOUT" "$BIN" run configs/experiments/chunk-graph-gpu.yaml -o "$W/cgtl" --timelines > "$W/cgtl.stdout" 2> "$W/cgtl.stderr"; echo "cgtl rc=$?" >> "$W/rc.txt"
tar cJf "$OUT/cb-$gpu.txz" -C "$W" .
cat "$W/rc.txt"
