#!/usr/bin/env bash
# Do copies issued at once on many streams run in turn or share the link?
# (issue #18, session 30): SET-batch's chunk graphs side by side run
# 1.5-2.2x longer on an H200 than simulated, and their time is mostly their
# batched copies. One lease:
#  1. `gpusched calibrate --only "copies at once, each timed"`
#     (calibrate/copyorder.go): one pinned copy on each of 1, 2, 4, 8 streams
#     behind a gate, 256 KiB and 1 MiB, both ways: the first, middle and
#     last copy's end;
#  2. `--only "copies one way on many streams"` and `--only "copies both
#     ways at once"` again (sessions 24 and 26), the same lease's context.
#
# Build here:
#   mkdir -p .gpu/co && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/co/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/co/BUILD; xz -9 -f .gpu/co/gpusched
# There, from the repository root, carrying .gpu/co:
#   OUT=$OUT bash scripts/gpu/copyorder.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/copyorder.sh
# Comes back: $OUT/co-<gpu>.tgz with device.txt, BUILD, each probe's raw
# JSON, report and log.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-180}
TAG=co
. scripts/gpu/lease.sh
probe "copies at once, each timed" co
probe "copies one way on many streams" cf
probe "copies both ways at once" cw
tar czf "$OUT/co-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
