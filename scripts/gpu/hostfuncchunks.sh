#!/usr/bin/env bash
# A host function behind SET-batch's chunk graph (issue #18, session 34):
# "callbacks beside running graphs" found no tail in the callback thread's
# wake behind a spin kernel (46-53 us, other streams' graphs running or not)
# where SET-batch's timelines have one. Three processes of calibrate "host
# functions after chunk graphs" (calibrate/hostfuncchunks.go: the chunk
# alone, with a second chunk queued behind the host function, beside three
# streams running a chunk), one tarball under $OUT.
#
# Build here:
#   mkdir -p .gpu/hfc && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/hfc/gpusched ./cmd/gpusched \
#     && git log -1 --format='%H %s' > .gpu/hfc/BUILD && xz -9 -f .gpu/hfc/gpusched
# There, from the repository root, carrying .gpu/hfc:
#   OUT=$OUT bash scripts/gpu/hostfuncchunks.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/hostfuncchunks.sh
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-150}
TAG=hfc
. scripts/gpu/lease.sh
probes 3 "host functions after chunk graphs" hfc
tar czf "$OUT/hostfuncchunks-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
