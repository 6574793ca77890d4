#!/usr/bin/env bash
# Queue today and as it was before session 21 (issue #18, session 30):
# configs/experiments/queue-per-run-gpu.yaml, one lease.
#
# Build here:
#   mkdir -p .gpu/qp && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/qp/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/qp/BUILD; xz -9 -f .gpu/qp/gpusched
# There, from the repository root, carrying .gpu/qp:
#   OUT=$OUT bash scripts/gpu/queueperrun.sh
# Comes back: $OUT/qp-<gpu>.tgz with device.txt, BUILD, the results and the
# run's stdout and stderr.
set -uo pipefail

RUN_TIMEOUT=${RUN_TIMEOUT:-200}
TAG=qp
. scripts/gpu/lease.sh
timeout "$RUN_TIMEOUT" "$BIN" run configs/experiments/queue-per-run-gpu.yaml -o "$W/qp" > "$W/qp.stdout" 2> "$W/qp.stderr"; echo "qp rc=$?" >> "$W/rc.txt"
tar czf "$OUT/qp-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
