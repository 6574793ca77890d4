#!/usr/bin/env bash
# ACS-SW's scheduler threads' own time per job (issue #18, session 14: the
# sync variants' missing time is on the scheduler threads' round trip, not
# the queue lock's), in one tarball under $OUT:
# configs/experiments/acs-window-gpu.yaml (`gpusched paper acs run`, 4
# workloads outside the checked ACS files x 10 schedulers x 5 repetitions;
# session 13's experiment) with acs-sw's scheduler_stats
# thread_{get,launch,record,sync,queue}_ns_per_job (time in the work queue's
# Get, in issuing the job, in the completion record, in the synchronize, in
# the other queue calls) beside window_busy/blocked_ns_per_op. About 10-40 s.
#
# Run from the repository root, with the binary built here:
#   mkdir -p .gpu/acsq && go build -tags cuda -ldflags='-s -w' -o .gpu/acsq/gpusched ./cmd/gpusched && xz -9 -f .gpu/acsq/gpusched
#   OUT=/some/dir bash scripts/gpu/acs-threads.sh
# Dry run on the simulator (any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/acs-threads.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/acsq/gpusched,
# unpacked from BIN.xz or BIN.gz when that is there), RUN_TIMEOUT (seconds,
# default 120). Back here: docs/results/calibration-h100.md ("Session 14:
# ACS-SW's thread variants and the host's contention").
set -uo pipefail

RUN_TIMEOUT=${RUN_TIMEOUT:-120}
CONFIG=configs/experiments/acs-window-gpu.yaml

. scripts/gpu/device-tag.sh
script_start acsq --host-record
lscpu >"$work/lscpu.txt" 2>&1

run_rc=0
paper_run acs "$CONFIG" "$RUN_TIMEOUT" "$work" || run_rc=$?
script_pack acs-threads

# Summary, last.
echo "== acs-threads on $tag ($DEVICE)"
head -2 "$work/device.txt"
tail -2 "$work/device.txt"
acs_thread_table "$work/acs/results.json"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$run_rc" = 0 ]
