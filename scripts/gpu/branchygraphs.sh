#!/usr/bin/env bash
# Concurrent graphs' branches (issue #18, session 29): SET-batch's 12-job
# chunks take 150-185 us each on an H200 with four workers' chunks beside
# them against 94 alone, and the four-worker rows grow 26-52% from 2 to 12
# branches a chunk. One lease:
#  1. `gpusched calibrate --only "branchy graphs over streams"`
#     (calibrate/branchygraphs.go): 12 launches of a graph of 4 KiB copies
#     around 48 empty kernels as 1-16 branches, over 1, 2, 4, 8 streams,
#     behind a gate.
#  2. configs/experiments/set-batch-concurrency-gpu.yaml once, untimelined:
#     a third lease of the rows the model is checked on.
#
# Build here:
#   mkdir -p .gpu/bg && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/bg/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/bg/BUILD; xz -9 -f .gpu/bg/gpusched
# There, from the repository root, carrying .gpu/bg:
#   OUT=$OUT bash scripts/gpu/branchygraphs.sh
# Dry run on the simulator (the experiment file's devices stay cuda, so
# only the probe runs):
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/branchygraphs.sh
# Comes back: $OUT/bg-<gpu>.tgz with device.txt, BUILD, the probe's raw
# JSON, report and log, and the experiment's results (sbc/).
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-120}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
TAG=bg
. scripts/gpu/lease.sh
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "branchy graphs over streams" --raw "$W/bg.json" --report "$W/bg.md" > "$W/bg.log" 2>&1; echo "bg rc=$?" >> "$W/rc.txt"
if [ "$DEVICE" = cuda ]; then
  timeout "$RUN_TIMEOUT" "$BIN" run configs/experiments/set-batch-concurrency-gpu.yaml -o "$W/sbc" > "$W/sbc.stdout" 2> "$W/sbc.stderr"; echo "sbc rc=$?" >> "$W/rc.txt"
fi
tar czf "$OUT/bg-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
