#!/usr/bin/env bash
# What a host function follows (issue #18, session 29): "set-batch chunks"
# with a host function after each chunk, queued behind a gate, are 18-30%
# slower on an H200 than simulated on 2-8 streams where host functions
# after spin kernels are right. One lease:
#  1. `gpusched calibrate --only "host functions after heads"`
#     (calibrate/hostfuncheads.go): 12 heads over 1, 2, 4, 8 streams, with
#     and without a no-op host function after each: a 35 us spin kernel,
#     the same as a graph, a pinned copy in of SET-batch's chunk bytes, the
#     same as a graph, copies in and out, the same as a graph.
#  2. `gpusched calibrate --only "set-batch chunks"` again (session 14's
#     probe): a second lease of the numbers it is checked against.
#
# Build here:
#   mkdir -p .gpu/hh && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/hh/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/hh/BUILD; xz -9 -f .gpu/hh/gpusched
# There, from the repository root, carrying .gpu/hh:
#   OUT=$OUT bash scripts/gpu/hostfuncheads.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/hostfuncheads.sh
# Comes back: $OUT/hh-<gpu>.tgz with device.txt, BUILD, the two probes' raw
# JSON, reports and logs.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-120}
TAG=hh
. scripts/gpu/lease.sh
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "host functions after heads" --raw "$W/hh.json" --report "$W/hh.md" > "$W/hh.log" 2>&1; echo "hh rc=$?" >> "$W/rc.txt"
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "set-batch chunks" --raw "$W/sb.json" --report "$W/sb.md" > "$W/sb.log" 2>&1; echo "sb rc=$?" >> "$W/rc.txt"
tar czf "$OUT/hh-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
