#!/usr/bin/env bash
# A second lease of "host function releases beside driver calls" and the
# twenty-third held-out SET set (issue #18, session 36): three processes of
#  `gpusched calibrate --only "host function releases beside driver calls"`,
# then `gpusched run configs/experiments/heldout23-set-gpu.yaml`.
#
# Build here:
#   mkdir -p .gpu/rl2 && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/rl2/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/rl2/BUILD; xz -9 -f .gpu/rl2/gpusched
# There, from the repository root, carrying .gpu/rl2:
#   OUT=$OUT bash scripts/gpu/releases-heldout.sh
# Comes back: $OUT/rl2-<gpu>.tgz with device.txt, BUILD, each process's raw
# JSON, report and log, and the held-out run's results and log.
set -uo pipefail

TAG=rl2
. scripts/gpu/lease.sh
probes 3 "host function releases beside driver calls" rl
experiment heldout23-set configs/experiments/heldout23-set-gpu.yaml
tar czf "$OUT/rl2-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
