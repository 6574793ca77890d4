#!/usr/bin/env bash
# Does a graph queued behind a host function start late? (issue #18,
# session 30): SET-batch's chunks launched while their stream's completion
# callback is pending (ring 2) run 52-58 us longer on an H200 than those
# launched after it (ring 1). One lease:
#  `gpusched calibrate --only "graphs behind a host function"`
#  (calibrate/graphsbehindcallbacks.go), three processes (two until session 35).
#
# Build here:
#   mkdir -p .gpu/gb && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/gb/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/gb/BUILD; xz -9 -f .gpu/gb/gpusched
# There, from the repository root, carrying .gpu/gb:
#   OUT=$OUT bash scripts/gpu/graphsbehind.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/graphsbehind.sh
# Comes back: $OUT/gb-<gpu>.tgz with device.txt, BUILD, each process's raw
# JSON, report and log.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-150}
TAG=gb
. scripts/gpu/lease.sh
for p in 1 2 3; do
  timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "graphs behind a host function" --raw "$W/gb$p.json" --report "$W/gb$p.md" > "$W/gb$p.log" 2>&1
  echo "gb$p rc=$?" >> "$W/rc.txt"
done
tar czf "$OUT/gb-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
