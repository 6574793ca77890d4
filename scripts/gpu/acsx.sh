#!/usr/bin/env bash
# ACS-SW's scheduler threads' three host costs, call by call (issue #18,
# session 15). Session 14's acs-threads measured, per job, that the GPU's
# scheduler threads record a timing-disabled event in 0.6-0.7 us (the
# simulator charges record_ns, measured on a timing event, 1.6 us, plus
# driver-lock waits), spend 0.4-1.4 us in queue calls (simulated: free) and
# launch 0.6-1.5 us slower with 4-8 threads. This runs calibrate's three
# probes of those calls, then acs-threads.sh's experiment for the check,
# in one tarball under $OUT:
#   1. calibrate --only "host thread hand-off" --only "event records
#      without timing" --only "queue calls over threads" --only "launches
#      over threads" (the ping-pong is what host.handoff_ns keeps when the
#      queue lock is fitted) -> <tag>-acsx.json / .md, calibrate.log
#   2. `gpusched paper acs run configs/experiments/acs-window-gpu.yaml`
#      (acs-sw's scheduler_stats thread_*_ns_per_job) -> acs/
# About 15 s for 1 and 15-45 s for 2.
#
# Build (here): mkdir -p .gpu/acsx && go build -tags cuda -ldflags='-s -w' -o .gpu/acsx/gpusched ./cmd/gpusched \
#   && git log -1 --format='%H %s' > .gpu/acsx/BUILD && xz -9 -f .gpu/acsx/gpusched
# There (no Go), from the repository root, carrying .gpu/acsx:
#   OUT=$OUT bash scripts/gpu/acsx.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/acsx.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/acsx/gpusched),
# CAL_TIMEOUT (default 60 s), RUN_TIMEOUT (default 90 s). Back here:
# `gpusched calibrate fit-thread-calls <tag>-acsx.json --sim CONFIG`;
# docs/results/calibration-h100.md ("Session 15").
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}
RUN_TIMEOUT=${RUN_TIMEOUT:-90}

. scripts/gpu/device-tag.sh
script_start acsx --host-record

rc=0
calibrate_step "calibrate thread calls" acsx "host thread hand-off" "event records without timing" \
    "queue calls over threads" "launches over threads"
paper_run acs configs/experiments/acs-window-gpu.yaml "$RUN_TIMEOUT" "$work" || rc=$?
script_pack acsx

# Summary, last.
echo "== acsx on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate thread\|^paper\|^total' "$work/device.txt"
sed 's/^calibrate: //' "$work/calibrate.log" | grep -v 'hand-off\|parked' || true
acs_thread_table "$work/acs/results.json"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
