#!/usr/bin/env bash
# Host threads at once (issue #18, session 10): ACS-SW's threaded rows
# with graphs or a shared window (acs-sw-batch4 -55%, acs-sw-shared -38% on
# heldout4-acs-gpu-h100.json; acs-sw-K1 and shared-K1 within 10-20%) run
# several host threads that capture, instantiate, update and synchronize at
# once, which no calibration times beyond plain launches ("launch
# throughput"). This runs `gpusched calibrate --only "host threads at
# once"` (each of ACS-SW's thread loops on 1, 2, 4 and 8 threads at once:
# launch + synchronize, a 4-kernel graph build, a 4-node graph update, a
# shared token held over a launch), with the single-thread figures of the
# same host ("host API costs", "graphs", "launch throughput") to fit
# against, then reruns heldout4-acs-gpu once on the same lease (a third
# lease of that file: checked against, never fitted on).
#
# Build here (one binary: the carry limit):
#   mkdir -p .gpu/threaded && go build -tags cuda -ldflags='-s -w' -o .gpu/threaded/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/threaded/BUILD; xz -9 -f .gpu/threaded/gpusched
# There (no Go), from the repository root, carrying .gpu/threaded:
#   OUT=$OUT bash scripts/gpu/threaded.sh
# Dry run on the simulator (same binary):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/threaded.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/threaded/gpusched,
# unpacked from BIN.xz), CAL_TIMEOUT (default 90 s), RUN_TIMEOUT (default
# 120 s), ACS (1: also rerun heldout4-acs-gpu; default 1).
# Comes back: $OUT/threaded-<gpu>.tgz: device.txt, <gpu>-threaded.json /
# .md (calibrate raw + report), acs/ (results.json, results.md, logs).
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-90}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
CONFIG=configs/experiments/heldout4-acs-gpu.yaml

. scripts/gpu/device-tag.sh
script_start threaded --host-record

rc=0
calibrate_step "calibrate" threaded "host API costs" "graphs" "launch throughput" "host threads at once"

if [ "${ACS:-1}" = 1 ]; then
    paper_run acs "$CONFIG" "$RUN_TIMEOUT" "$work" || rc=$?
fi
script_pack threaded

# Summary, last.
echo "== threaded on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^cpu:\|^calibrate:\|^paper acs run:\|^total' "$work/device.txt"
grep -h 'at once\|throughput\|launch API cost\|instantiate' "$work/calibrate.log" | grep -v 'per thread' | head -30
tail -3 "$work/acs-stderr.log" 2>/dev/null
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
