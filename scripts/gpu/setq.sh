#!/usr/bin/env bash
# Whether the 16-branch chunks' loss is paid per release or per branch
# (issue #18, session 14). front_end.graph_branch_queue_ns (fitted on
# "set-batch chunks": 16 branches of ONE empty kernel) charges each release
# of a graph launch for the branches other running launches hold; the
# probe's chunks cannot tell that from a cost paid once per branch. This
# runs calibrate's "set-batch deep chunks" (12 gated launches over 1, 2,
# 4, 8 streams of 16x1, 16x2, 16x4 and 4x4 empty-kernel branches between
# the 1,638,400-byte copies): per release, 16x4 on 8 streams loses about
# four times what 16x1 does (simulated 1,613 us against 689); per branch,
# about as much (709 against 689). Then the same under
# CUDA_DEVICE_MAX_CONNECTIONS=1 (the model: no loss). About 5 s a run.
#
# Build (here): go build -tags cuda -ldflags='-s -w' -o .gpu/setq/gpusched ./cmd/gpusched
# There (no Go), from the repository root, carrying .gpu/setq:
#   OUT=$OUT bash scripts/gpu/setq.sh
# Dry run on the simulator (the variable changes nothing there):
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/setq.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setq/gpusched),
# CAL_TIMEOUT (default 60 s per run), CONNECTIONS (default "default 1").
# Comes back: $OUT/setq-<gpu>.tgz: device.txt, <gpu>-setq-<N>.json / .md
# and calibrate-<N>.log per N (default: the driver's own setting).
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}
CONNECTIONS=${CONNECTIONS:-default 1}

. scripts/gpu/device-tag.sh
script_start setq

rc=0
calibrate_over_connections "set-batch deep chunks" setq- ""
script_pack setq

# Summary, last.
connections_summary setq "" 'deep chunk'
[ "$rc" = 0 ]
