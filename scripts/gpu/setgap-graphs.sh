#!/usr/bin/env bash
# Graph-per-job's small graphs (issue #18, session 17): setgap.sh's GPU
# traces show the job graph (64 KiB copy, kernel, 64 KiB copy) instantiated
# in 8-9 us where the simulator charges 22. One lease, a few seconds:
# calibrate --only "small graph builds" (calibrate/smallgraphs.go: graph-
# per-job's cycle on 1-16 empty kernels, copies alone and copies around
# kernels, each call timed) and --only "host API costs" --only graphs (the same lease's
# instantiate of 8 and 64 kernels, the configs' figure).
#
# Build here (one binary: the carry limit):
#   mkdir -p .gpu/setgap && go build -tags cuda -ldflags='-s -w' -o .gpu/setgap/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/setgap/BUILD; xz -9 -f .gpu/setgap/gpusched
# There (no Go), from the repository root, carrying .gpu/setgap:
#   OUT=$OUT bash scripts/gpu/setgap-graphs.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/setgap-graphs.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setgap/gpusched),
# CAL_TIMEOUT (default 30 s).
# Comes back: $OUT/setgap-graphs-<gpu>.tgz: device.txt, <gpu>-smallgraphs.json / .md, calibrate.log.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-30}
BIN=${BIN:-.gpu/setgap/gpusched}

. scripts/gpu/device-tag.sh
script_start setgap --host-record

rc=0
calibrate_step "calibrate" smallgraphs "small graph builds" "host API costs" graphs
script_pack setgap-graphs

echo "== setgap-graphs on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate:\|^total' "$work/device.txt"
grep -h 'small graph .*: instantiate\|small graph ckc\|graph instantiate' "$work/calibrate.log" | sed 's/^calibrate: //'
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
