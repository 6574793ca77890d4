#!/usr/bin/env bash
# Queued graph launches' branches (issue #18, session 29): whether a graph
# launch queued behind a held stream holds up another stream's graph
# launched after it (calibrate/queuedbranches.go), the explanation tried for
# SET-batch's four-worker rows losing to 12-branch chunks and to ring 2.
# One lease:
#  1. `gpusched calibrate --only "queued graphs' branches"` with the
#     driver's default connections, CUDA_DEVICE_MAX_CONNECTIONS=32 and =1;
#  2. `gpusched calibrate --only "branchy graphs over streams"` again: a
#     second lease of that probe.
#
# Build here:
#   mkdir -p .gpu/qb && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/qb/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/qb/BUILD; xz -9 -f .gpu/qb/gpusched
# There, from the repository root, carrying .gpu/qb:
#   OUT=$OUT bash scripts/gpu/queuedbranches.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/queuedbranches.sh
# Comes back: $OUT/qb-<gpu>.tgz with device.txt, BUILD, each run's raw JSON,
# report and log.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-120}
TAG=qb
. scripts/gpu/lease.sh
probe() { # name, output stem, environment assignments...
  local only=$1 stem=$2; shift 2
  env "$@" timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "$only" --raw "$W/$stem.json" --report "$W/$stem.md" > "$W/$stem.log" 2>&1
  echo "$stem rc=$?" >> "$W/rc.txt"
}
probe "queued graphs' branches" qb
probe "queued graphs' branches" qb-conn32 CUDA_DEVICE_MAX_CONNECTIONS=32
probe "queued graphs' branches" qb-conn1 CUDA_DEVICE_MAX_CONNECTIONS=1
probe "branchy graphs over streams" bg-r2
tar czf "$OUT/qb-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
