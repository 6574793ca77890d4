#!/usr/bin/env bash
# Does a host function's release wait for the host's driver calls? (issue
# #18, session 36): SET-batch's simulated rows are fast by about 8% a
# worker with two launches in flight a worker, while its dispatcher
# launches chunk graphs as the callback thread releases the chunks queued
# behind the completion callbacks. One lease:
#  `gpusched calibrate --only "host function releases beside driver calls"`
#  (calibrate/releasebesidecalls.go) in three processes, then
#  `gpusched calibrate --only "set-batch chunks"` (session 14's dispatched
#  chunks on 1-8 streams) once.
#
# Build here:
#   mkdir -p .gpu/rl && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/rl/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/rl/BUILD; xz -9 -f .gpu/rl/gpusched
# There, from the repository root, carrying .gpu/rl (or TAG=DIR, .gpu/DIR):
#   OUT=$OUT bash scripts/gpu/releases.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/releases.sh
# Comes back: $OUT/rl-<gpu>.tgz with device.txt, BUILD, each process's raw
# JSON, report and log.
set -uo pipefail

TAG=${TAG:-rl}
. scripts/gpu/lease.sh
probes 3 "host function releases beside driver calls" rl
probe "set-batch chunks" sbc
tar czf "$OUT/rl-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
