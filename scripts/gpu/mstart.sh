#!/usr/bin/env bash
# What other streams cost a stream's kernels on the device (issue #18,
# session 17). "runs over streams" (session 16, raw/mstream-*.tgz) showed a
# chain whose streams wait on each other pays up to 2 us a kernel more than
# on one stream, as much with 2 as with 20 us kernels, saturating at 8 or
# more streams; the simulator models it as front_end.pending_queue_ns (per
# other hardware queue holding a command that waits). This runs, on one
# lease, in one tarball under $OUT:
#   1. calibrate --only "chains beside other streams" (new: the per-kernel
#      device time of a chain on one stream while 0-63 other streams wait on
#      its end, run a kernel that outlasts it, or run one with another
#      queued behind; 2 and 20 us spins) plus, on the same lease, "runs over
#      streams" and "cross-stream dependencies"
#      -> <tag>-mstart.json / .md, calibrate.log
# About 15-25 s.
#
# Build (here): mkdir -p .gpu/mstart && go build -tags cuda -ldflags='-s -w' -o .gpu/mstart/gpusched ./cmd/gpusched \
#   && git log -1 --format='%H %s' > .gpu/mstart/BUILD && xz -9 -f .gpu/mstart/gpusched
# There (no Go), from the repository root, carrying .gpu/mstart:
#   OUT=$OUT bash scripts/gpu/mstart.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/mstart.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/mstart/gpusched),
# CAL_TIMEOUT (default 90 s). Back here: `python3 scripts/fit-pending-queues.py
# gpusched configs/devices/h1x0.yaml <tag>-mstart.json`; docs/results/calibration-h100.md
# ("Session 17: other streams' waiting commands slow a stream's kernels").
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-90}

. scripts/gpu/device-tag.sh
script_start mstart --host-record

rc=0
calibrate_step "calibrate beside" mstart "chains beside other streams" "runs over streams" "cross-stream dependencies"
script_pack mstart

# Summary, last.
echo "== mstart on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate beside\|^total' "$work/device.txt"
sed 's/^calibrate: //' "$work/calibrate.log" | grep '^chain beside\|paths in a chain, 20\|round-robin chain, 20\|gap' || true
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
