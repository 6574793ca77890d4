#!/usr/bin/env bash
# ACS-SW's window path per kernel over 1 to 8 scheduler threads (issue #18,
# session 13: the simulator gets the order of ACS-SW's variants wrong), in
# one tarball under $OUT: `gpusched calibrate --only "scheduler threads
# behind a window"` (a window thread hands 256 kernels to K = 1, 2, 4, 8
# scheduler threads through their queues and takes the completions back
# through one shared queue; each scheduler thread replies at once, or
# launches an empty kernel and synchronizes the stream, or launches,
# records and synchronizes the event), with, on the same host, "host API
# costs" (the launch cost: the host's speed), "host thread hand-off",
# "launch throughput" and "host threads at once" (the scheduler threads'
# loops without a window thread). About 3 s of GPU work after the context
# is up.
#
# Run from the repository root, with the binary built here:
#   mkdir -p .gpu/acs && go build -tags cuda -ldflags='-s -w' -o .gpu/acs/gpusched ./cmd/gpusched && xz -9 -f .gpu/acs/gpusched
#   OUT=/some/dir bash scripts/gpu/acs-window.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/acs-window.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/acs/gpusched,
# unpacked from BIN.xz or BIN.gz when that is there), CAL_TIMEOUT (seconds,
# default 90). Back here: docs/results/calibration-h100.md ("Session 13:
# ACS-SW's window path").
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-90}

. scripts/gpu/device-tag.sh
script_start acs --host-record
lscpu >"$work/lscpu.txt" 2>&1

t0=$(date +%s)
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "host API costs" --only "host thread hand-off" \
    --only "launch throughput" --only "host threads at once" --only "scheduler threads behind a window" \
    --raw "$work/$tag-window.json" --report "$work/$tag-window.md" 2>"$work/calibrate.log"
cal_rc=$?
cal_s=$(($(date +%s) - t0))

echo "calibrate: exit $cal_rc in ${cal_s}s; total $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/acs-window-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

# Summary, last.
echo "== acs-window on $tag ($DEVICE)"
head -2 "$work/device.txt"
echo "calibrate: exit $cal_rc, ${cal_s}s"
grep '^calibrate: window\|^calibrate: launch\|^calibrate: host' "$work/calibrate.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$cal_rc" = 0 ]
