#!/usr/bin/env bash
# SET's trace diff (issue #18, session 17): where each job's time goes on the
# GPU that the simulator does not charge. SET's schedulers are simulated
# 15-40% fast and Graph-per-job 25% slow on the H100 (median (sim-GPU)/GPU
# over the committed rows). One lease:
#  1. `gpusched trace` of heldout8-set-gpu.yaml's sobel-256 s128 rows
#     (synchronous, graph, batching-4, queue-4, set-4, setplus-4,
#     setbatch16-4) and gemm-256 s128's (synchronous, graph, queue-4, set-4):
#     every command on its stream (events around it) and, with this branch's
#     binary, every host call on its host lane (capture, instantiate,
#     records, waits, node updates, synchronizes, a queue's Get).
#  2. configs/experiments/setgap-gpu.yaml (the same rows untraced, 3
#     repetitions): how much tracing moves them.
#  3. calibrate --only "host API costs" --only "host callbacks": this
#     lease's call costs beside the configs'.
#
# Build here (one binary: the carry limit):
#   mkdir -p .gpu/setgap && go build -tags cuda -ldflags='-s -w' -o .gpu/setgap/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/setgap/BUILD; xz -9 -f .gpu/setgap/gpusched
# There (no Go), from the repository root, carrying .gpu/setgap:
#   OUT=$OUT bash scripts/gpu/setgap.sh
# Dry run on the simulator (same rows, simulated traces):
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/setgap.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setgap/gpusched,
# unpacked from BIN.xz or BIN.gz), TRACE_TIMEOUT (per trace, default 20 s),
# RUN_TIMEOUT (default 40 s), CAL_TIMEOUT (default 20 s).
# Comes back: $OUT/setgap-<gpu>.tgz: device.txt, traces/*.json.gz,
# trace.log, set/ (results of the untraced run), <gpu>-hostapi.json / .md,
# calibrate.log.
set -uo pipefail

TRACE_TIMEOUT=${TRACE_TIMEOUT:-20}
RUN_TIMEOUT=${RUN_TIMEOUT:-40}
CAL_TIMEOUT=${CAL_TIMEOUT:-20}
CONFIG=configs/experiments/setgap-gpu.yaml
TRACE_CONFIG=configs/experiments/heldout8-set-gpu.yaml

. scripts/gpu/device-tag.sh
script_start setgap --host-record

rc=0
mkdir -p "$work/traces"
for row in "sobel-256 s128|synchronous" "sobel-256 s128|graph" "sobel-256 s128|batching-4" \
    "sobel-256 s128|queue-4" "sobel-256 s128|set-4" "sobel-256 s128|setplus-4" "sobel-256 s128|setbatch16-4" \
    "gemm-256 s128|synchronous" "gemm-256 s128|graph" "gemm-256 s128|queue-4" "gemm-256 s128|set-4"; do
    w=${row%%|*} s=${row##*|}
    f="$work/traces/$(echo "$w" | tr ' ' '_')--$s.json"
    timed_step "trace $w / $s" timeout "$TRACE_TIMEOUT" "$BIN" trace "$TRACE_CONFIG" --device "$DEVICE" \
        --workload "$w" --scheduler "$s" -o "$f" >>"$work/trace.log" 2>&1
    gzip -f "$f" 2>/dev/null
done

paper_run set "$CONFIG" "$RUN_TIMEOUT" "$work" || rc=$?

calibrate_step "calibrate" hostapi "host API costs" "host callbacks"

script_pack setgap

# Summary, last.
echo "== setgap on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^trace \|^paper set run:\|^calibrate:\|^total' "$work/device.txt"
grep 'makespan' "$work/trace.log"
python3 - "$work/set/results.json" <<'PY' || true
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(f'{r["workload"]:16s} {r["scheduler"]:14s} untraced makespan {r["makespan_us"]["median"]:9.1f} us')
PY
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
