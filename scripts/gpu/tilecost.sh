#!/usr/bin/env bash
# What cuSync's tile counters cost on the GPU (issue #18 item 3), in one
# tarball under $OUT: `gpusched run configs/experiments/tilecost-gpu.yaml`,
# seven cuSync shapes under stream order, RowSync, and RowSync's kernels in
# stream order with posts only, polls only (counters already complete) and
# everything (sched/tilesync/probe.go), each kernel's end recorded.
# calibrate.FitTileSync (gpusched calibrate tilesync-fit) fits the
# simulator's tile_sync costs from results.json.
#
# Run from the repository root, with the binary built by:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/tilecost/gpusched ./cmd/gpusched && gzip -f .gpu/tilecost/gpusched
#   OUT=/some/dir bash scripts/gpu/tilecost.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/tilecost.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/tilecost/gpusched,
# unpacked from BIN.gz when that is there), RUN_TIMEOUT (seconds, default
# 150).
set -uo pipefail

RUN_TIMEOUT=${RUN_TIMEOUT:-150}

. scripts/gpu/device-tag.sh
script_start tilecost

sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" configs/experiments/tilecost-gpu.yaml >"$work/tilecost-gpu.yaml"
timeout "$RUN_TIMEOUT" "$BIN" run "$work/tilecost-gpu.yaml" -o "$work/run" >"$work/run.log" 2>&1
rc=$?
rm -f "$work/run/"*.svg "$work/run/"*.pdf
echo "run: exit $rc in $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/tilecost-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

echo "== tilecost on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^run:' "$work/device.txt"
grep -A45 '^workload' "$work/run.log" | cut -c1-100
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
