#!/usr/bin/env bash
# Whether SET-batch's 16-branch chunk graphs interfere through the GPU's
# hardware queues (issue #18, session 13, second call): on the H100 the
# "set-batch chunks" probe (scripts/gpu/setbatch.sh) has 12 chunk graphs of
# 16 one-kernel branches take 559-666 us on 4-8 streams behind a gate where
# 2 branches of 8, one chain, or the copies alone take 477-508 (simulated
# 492 for all), and 922-1009 us where SET-batch's dispatcher issues them
# (simulated 588-596). The driver maps streams, and a graph's branches, onto
# CUDA_DEVICE_MAX_CONNECTIONS hardware queues (default 8): this runs the
# same probe with 1, 8 and 32 connections (same binary, nothing else
# changes), `calibrate --only "set-batch chunks"` each, about 3 s a run.
#
# Build: the binary of scripts/gpu/setbatch.sh (.gpu/setbatch, commit 5b288af or later).
# There (no Go), from the repository root, carrying .gpu/setbatch:
#   OUT=$OUT bash scripts/gpu/setbatch-connections.sh
# Dry run on the simulator (the variable changes nothing there):
#   OUT=/tmp/x DEVICE=h100 BIN=/tmp/gpusched bash scripts/gpu/setbatch-connections.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setbatch/gpusched),
# CAL_TIMEOUT (default 60 s per run), CONNECTIONS (default "1 8 32").
# Comes back: $OUT/setbatch-connections-<gpu>.tgz: device.txt,
# <gpu>-setbatch-conn<N>.json / .md and calibrate-conn<N>.log per N.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}
CONNECTIONS=${CONNECTIONS:-1 8 32}

. scripts/gpu/device-tag.sh
script_start setbatch

rc=0
calibrate_over_connections "set-batch chunks" setbatch-conn conn
script_pack setbatch-connections

# Summary, last.
connections_summary setbatch-connections conn 'chunk 16x1 on [48] streams, \(gated\|dispatched\)  \|chunk 2x8 on 8 streams, \(gated\|dispatched\)  '
[ "$rc" = 0 ]
