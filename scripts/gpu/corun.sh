#!/usr/bin/env bash
# KeSCo's concurrent rows (issue #18, session 12, corun), in one tarball
# under $OUT:
#  1. calibrate --only "records over streams" (and "stream concurrency",
#     the kernel-only control of the same lease): one 50 us spin kernel per
#     stream on 2-32 streams released at once, alone, with an event record
#     behind each (Nimble's and GrCUDA's per-kernel record), and with a
#     record, a wait on the next stream and a second kernel. The simulator
#     lets a record behind a running kernel hold its hardware queue (6
#     queues): simulated, "kernel then record" over 10 streams runs 4.7
#     kernels at once against 9.2 without records; that is what makes BS /
#     nimble 645 us simulated against 431 measured.
#  2. gpusched profile of configs/experiments/corun-blocks-gpu.yaml: KeSCo's
#     kernels at 8, 32 and 64 blocks (profiled at 16 only so far).
#
# Run from the repository root, with the binary built by:
#   mkdir -p .gpu/corun && go build -tags cuda -ldflags='-s -w' -o .gpu/corun/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/corun/BUILD; xz -9 -f .gpu/corun/gpusched
#   OUT=/some/dir bash scripts/gpu/corun.sh
# Dry run on the simulator (a binary built without -tags cuda is enough):
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/corun.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/corun/gpusched),
# PROFILE_DEADLINE (seconds of profiling, default 60).
set -uo pipefail

PROFILE_DEADLINE=${PROFILE_DEADLINE:-60}

. scripts/gpu/device-tag.sh
script_start corun --host-record

t0=$(date +%s)
timeout 60 "$BIN" calibrate --device "$DEVICE" --only "records over streams" --only "stream concurrency" \
    --raw "$work/$tag-records.json" --report "$work/$tag-records.md" >"$work/calibrate.log" 2>&1
rc1=$?
echo "calibrate records over streams: exit $rc1 in $(($(date +%s) - t0))s" >>"$work/device.txt"

t0=$(date +%s)
sed "s/^devices: \[cuda\]/devices: [$(printf '%s' "$DEVICE" | sed 's/[\/&]/\\&/g')]/" \
    configs/experiments/corun-blocks-gpu.yaml >"$work/corun-blocks-gpu.yaml"
timeout $((PROFILE_DEADLINE + 30)) "$BIN" profile --device "$DEVICE" -deadline "${PROFILE_DEADLINE}s" \
    --max-sizes 4 --max-occupancies 1 -o "$work/$tag-blocks-profile.yaml" "$work/corun-blocks-gpu.yaml" \
    >"$work/profile.log" 2>&1
rc2=$?
echo "profile corun-blocks-gpu: exit $rc2 in $(($(date +%s) - t0))s" >>"$work/device.txt"
script_pack corun

echo "== corun on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate\|^profile\|^total' "$work/device.txt"
grep -E 'over (6|8|10|12|16|32) streams' "$work/calibrate.log" | cut -c1-120
tail -3 "$work/profile.log" | cut -c1-150
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
