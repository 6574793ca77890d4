#!/usr/bin/env bash
# Do a reached graph's waiting branches hold up other graphs? (issue #18,
# session 30): SET-batch's chunk graphs run 1.5-3.5x longer side by side on
# an H200 than simulated, their copies run in turn as simulated ("copies at
# once, each timed"), and session 29 found that launches waiting behind
# their stream's work hold nothing up. One lease:
#  `gpusched calibrate --only "reached graphs' waiting branches"`
#  (calibrate/reachedbranches.go) under the driver's default connections,
#  CUDA_DEVICE_MAX_CONNECTIONS=32 and =1.
#
# Build here:
#   mkdir -p .gpu/rb && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/rb/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/rb/BUILD; xz -9 -f .gpu/rb/gpusched
# There, from the repository root, carrying .gpu/rb:
#   OUT=$OUT bash scripts/gpu/reachedbranches.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/reachedbranches.sh
# Comes back: $OUT/rb-<gpu>.tgz with device.txt, BUILD, each run's raw
# JSON, report and log.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-150}
TAG=rb
. scripts/gpu/lease.sh
probe() { # output stem, environment assignments...
  local stem=$1; shift
  env "$@" timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "reached graphs' waiting branches" --raw "$W/$stem.json" --report "$W/$stem.md" > "$W/$stem.log" 2>&1
  echo "$stem rc=$?" >> "$W/rc.txt"
}
probe rb
probe rb-conn32 CUDA_DEVICE_MAX_CONNECTIONS=32
probe rb-conn1 CUDA_DEVICE_MAX_CONNECTIONS=1
tar czf "$OUT/rb-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
