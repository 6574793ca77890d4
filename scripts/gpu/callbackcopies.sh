#!/usr/bin/env bash
# Other streams' copies and the callback path, over copy sizes (issue #18,
# session 35): three processes of calibrate "callbacks beside running graphs"
# (now with 0.4 and 6.6 MB copies beside the 1.6 MB of session 34), then the
# twenty-second held-out SET set (configs/experiments/heldout22-set-gpu.yaml:
# SET-batch's chunks side by side with larger and smaller copies), one tarball
# under $OUT.
#
# Build here:
#   mkdir -p .gpu/cbg && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/cbg/gpusched ./cmd/gpusched \
#     && git log -1 --format='%H %s' > .gpu/cbg/BUILD && xz -9 -f .gpu/cbg/gpusched
# There, from the repository root, carrying .gpu/cbg:
#   OUT=$OUT bash scripts/gpu/callbackcopies.sh
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-150}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
TAG=cbg
. scripts/gpu/lease.sh
probes 3 "callbacks beside running graphs" cbg
experiment heldout22-set configs/experiments/heldout22-set-gpu.yaml
rm -f "$W"/*/*.svg "$W"/*/*.pdf
tar cJf "$OUT/callbackcopies-$gpu.txz" -C "$W" .
cat "$W/rc.txt"
