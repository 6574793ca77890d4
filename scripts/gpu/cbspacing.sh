#!/usr/bin/env bash
# Whether the driver's callback thread stays awake between host callbacks
# a few tens of microseconds apart (issue #18, session 15). The simulator
# charges front_end.callback_wake_ns (31 us on the H100, fitted on
# callbacks 60 us or more apart) to every callback that finds the thread
# idle; SET's workers return through callbacks 20-30 us apart, and with two
# workers the simulator is 20-32% slow on every committed SET file while
# its wait per job is twice the GPU's. This runs calibrate's "host
# callbacks spaced" (two callbacks on one stream separated by a spin kernel
# of 2-150 us: the second's cost per gap) beside "host callbacks" and
# "parked hand-offs" on the same lease. About 15 s.
#
# Build (here): go build -tags cuda -ldflags='-s -w' -o .gpu/cbspacing/gpusched ./cmd/gpusched
# There (no Go), from the repository root, carrying .gpu/cbspacing:
#   OUT=$OUT bash scripts/gpu/cbspacing.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/cbspacing.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/cbspacing/gpusched),
# CAL_TIMEOUT (default 90 s). Comes back: $OUT/cbspacing-<gpu>.tgz:
# device.txt, <gpu>-cbspacing.json (calibrate --raw) / .md, calibrate.log.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-90}

. scripts/gpu/device-tag.sh
script_start cbspacing --host-record

rc=0
calibrate_step "calibrate callbacks" cbspacing "host callbacks spaced" "host callbacks" "parked hand-offs"
script_pack cbspacing

# Summary, last.
echo "== cbspacing on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate callbacks\|^total' "$work/device.txt"
grep -h 'spaced callbacks\|callback hand-off after\|callback duration\|extra cost once parked' "$work/calibrate.log" | sed 's/^calibrate: //'
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
