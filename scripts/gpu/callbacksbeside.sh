#!/usr/bin/env bash
# Does a host function's wake grow when other streams run graphs? (issue #18,
# session 34): SET-batch's GPU timelines show the callback thread's wake after
# 60-250 us idle at 44.5-56.7 us mean with no chunk graph running anywhere and
# 75.2-103.7 us with one or more (calibration-h100.md "Session 34"). Three
# processes of calibrate "callbacks beside running graphs"
# (calibrate/callbacksbeside.go), one tarball under $OUT.
#
# Build here:
#   mkdir -p .gpu/cbg && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/cbg/gpusched ./cmd/gpusched \
#     && git log -1 --format='%H %s' > .gpu/cbg/BUILD && xz -9 -f .gpu/cbg/gpusched
# There, from the repository root, carrying .gpu/cbg:
#   OUT=$OUT bash scripts/gpu/callbacksbeside.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/callbacksbeside.sh
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-150}
TAG=cbg
. scripts/gpu/lease.sh
probes 3 "callbacks beside running graphs" cbg
tar czf "$OUT/callbacksbeside-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
