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
# loops without a window thread). Then configs/experiments/acs-window-gpu.yaml
# (`gpusched paper acs run`, 4 workloads outside the checked ACS files x 7
# schedulers x 5 repetitions): ACS-SW's scheduler_stats
# window_busy_ns_per_op, the window thread's own CPU time per operation on
# this host, which the simulator charges as the paper's check cost. About
# 3 s of calibrate and 20-40 s of experiment.
#
# Run from the repository root, with the binary built here:
#   mkdir -p .gpu/acs && go build -tags cuda -ldflags='-s -w' -o .gpu/acs/gpusched ./cmd/gpusched && xz -9 -f .gpu/acs/gpusched
#   OUT=/some/dir bash scripts/gpu/acs-window.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/acs-window.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/acs/gpusched,
# unpacked from BIN.xz or BIN.gz when that is there), CAL_TIMEOUT (seconds,
# default 90), RUN_TIMEOUT (seconds, default 120). Back here:
# docs/results/calibration-h100.md ("Session 13: ACS-SW's window path").
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-90}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
CONFIG=configs/experiments/acs-window-gpu.yaml

. scripts/gpu/device-tag.sh
script_start acs --host-record
lscpu >"$work/lscpu.txt" 2>&1

t0=$(date +%s)
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "host API costs" --only "host thread hand-off" \
    --only "launch throughput" --only "host threads at once" --only "scheduler threads behind a window" \
    --raw "$work/$tag-window.json" --report "$work/$tag-window.md" 2>"$work/calibrate.log"
cal_rc=$?
cal_s=$(($(date +%s) - t0))

echo "calibrate: exit $cal_rc in ${cal_s}s" >>"$work/device.txt"
run_rc=0
paper_run acs "$CONFIG" "$RUN_TIMEOUT" "$work" || run_rc=$?
script_pack acs-window

# Summary, last.
echo "== acs-window on $tag ($DEVICE)"
head -2 "$work/device.txt"
echo "calibrate: exit $cal_rc, ${cal_s}s"
grep '^calibrate: window\|^calibrate: launch\|^calibrate: host' "$work/calibrate.log"
tail -3 "$work/device.txt"
python3 - "$work/acs/results.json" <<'PY' || true
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    st = r.get("scheduler_stats") or {}
    print(f'{r["workload"]:20s} {r["scheduler"]:30s} {r["makespan_us"]["median"]:9.1f} us  window busy {st.get("window_busy_ns_per_op", 0):7.0f} ns/op  blocked {st.get("window_blocked_ns_per_op", 0):7.0f}')
PY
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$cal_rc" = 0 ] && [ "$run_rc" = 0 ]
