#!/usr/bin/env bash
# Device-side costs of graph nodes (issue #18 item 3, SET-batch's chunk
# graphs), in one tarball under $OUT: `gpusched calibrate --only "graph
# device costs"`: Elapsed behind a gate kernel of one launch and of 16
# launches back to back of graphs of 2 and 16 pinned 4 KiB copy nodes, of
# 2 and 16 empty kernels, of kernels and copies alternating, of 1 to 16
# one-kernel branches between two copies and between two kernels, and of
# SET-batch's chunk shape (1 MiB copies around 16x4, 4x16 and 1x64
# kernels). Well under 2 s of GPU work after the context is up.
#
# Run from the repository root, with the binary built here:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/setfid/gpusched ./cmd/gpusched && gzip -f .gpu/setfid/gpusched
#   OUT=/some/dir bash scripts/gpu/setfid-graphdevice.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/setfid-graphdevice.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setfid/gpusched,
# unpacked from BIN.gz when that is there), CAL_TIMEOUT (seconds, default 60).
# Back here: docs/results/calibration-h100.md ("Graph nodes on the device")
# has the refit.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}

BIN=${BIN:-.gpu/setfid/gpusched}
. scripts/gpu/device-tag.sh
script_start setfid-graphdevice
[ -f .gpu/setfid/BUILD ] && cp .gpu/setfid/BUILD "$work/BUILD"

t0=$(date +%s)
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "graph device costs" \
    --raw "$work/$tag-graphdevice.json" --report "$work/$tag-graphdevice.md" 2>"$work/calibrate.log"
cal_rc=$?
cal_s=$(($(date +%s) - t0))

echo "calibrate: exit $cal_rc in ${cal_s}s; total $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/setfid-graphdevice-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

# Summary, last.
echo "== setfid-graphdevice on $tag ($DEVICE)"
head -2 "$work/device.txt"
echo "calibrate: exit $cal_rc, ${cal_s}s"
grep '^calibrate' "$work/calibrate.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$cal_rc" = 0 ]
