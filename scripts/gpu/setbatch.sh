#!/usr/bin/env bash
# What serialises SET-batch's chunks on the GPU (issue #18, session 13): on
# heldout6-set-gpu sobel-192 s160 setbatch16s-{2,4,8} stay at about 1,200 us
# where the simulator gives 797, 590, 587 us. Three parts, one lease:
#  1. `gpusched calibrate --only "set-batch chunks"` (calibrate/setbatchchunks.go):
#     the row's chunk graphs (1,638,400-byte copies around 16 empty kernels as
#     16 branches, 2 branches, one chain, or the two copies alone), 12
#     launches over 1, 2, 4, 8 streams: gated, gated with SET-batch's calls
#     (copy nodes updated, host function), and as SET-batch's ring-2
#     dispatcher issues them (wall, t_schedule, t_wait); with "host API
#     costs" and "host callbacks" of the same lease; and 12 one-block 20 or 60
#     us spin kernels over 1-8 streams with and without a host function
#     after each (whether host functions of different streams share the
#     driver callback thread's wake).
#  2. `gpusched trace` of six real rows (heldout6-set-gpu.yaml: sobel-192
#     s160 setbatch16s-2/-4/-8/-br2-4, bp-384 h128 setbatch16s-8/-br2-4):
#     each chunk graph's start and end on its stream (events around it), the
#     host functions and the host calls.
#  3. configs/experiments/setbatch-gpu.yaml once (the rows untraced, 5
#     repetitions): whether this lease reproduces heldout6's numbers.
#
# Build here (one binary: the carry limit):
#   mkdir -p .gpu/setbatch && go build -tags cuda -ldflags='-s -w' -o .gpu/setbatch/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/setbatch/BUILD; xz -9 -f .gpu/setbatch/gpusched
# There (no Go), from the repository root, carrying .gpu/setbatch:
#   OUT=$OUT bash scripts/gpu/setbatch.sh
# Dry run on the simulator (same binary):
#   OUT=/tmp/x DEVICE=h100 BIN=/tmp/gpusched bash scripts/gpu/setbatch.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setbatch/gpusched,
# unpacked from BIN.xz or BIN.gz), CAL_TIMEOUT (default 60 s), TRACE_TIMEOUT
# (per trace, default 30 s), RUN_TIMEOUT (default 60 s).
# Comes back: $OUT/setbatch-<gpu>.tgz: device.txt, <gpu>-setbatch.json / .md
# (calibrate raw + report), calibrate.log, traces/*.json.gz, set/ (results).
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}
TRACE_TIMEOUT=${TRACE_TIMEOUT:-30}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
CONFIG=configs/experiments/setbatch-gpu.yaml
TRACE_CONFIG=configs/experiments/heldout6-set-gpu.yaml

. scripts/gpu/device-tag.sh
script_start setbatch --host-record

rc=0
calibrate_step "calibrate" setbatch "host API costs" "host callbacks" "set-batch chunks"

mkdir -p "$work/traces"
for row in "sobel-192 s160|setbatch16s-2" "sobel-192 s160|setbatch16s-4" "sobel-192 s160|setbatch16s-8" \
    "sobel-192 s160|setbatch16s-br2-4" "bp-384 h128|setbatch16s-8" "bp-384 h128|setbatch16s-br2-4"; do
    w=${row%%|*} s=${row##*|}
    f="$work/traces/$(echo "$w" | tr ' ' '_')--$s.json"
    t0=$(date +%s)
    timeout "$TRACE_TIMEOUT" "$BIN" trace "$TRACE_CONFIG" --device "$DEVICE" --workload "$w" --scheduler "$s" -o "$f" \
        >>"$work/trace.log" 2>&1
    r=$?
    [ "$r" = 0 ] || rc=$r
    gzip -f "$f" 2>/dev/null
    echo "trace $w / $s: exit $r in $(($(date +%s) - t0))s" >>"$work/device.txt"
done

paper_run set "$CONFIG" "$RUN_TIMEOUT" "$work" || rc=$?
script_pack setbatch

# Summary, last.
echo "== setbatch on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate:\|^trace \|^paper set run:\|^total' "$work/device.txt"
grep -h 'set-batch host functions: 20\|set-batch chunk 16x1\|set-batch chunk 2x8 on 4\|set-batch chunk copies on [48]' "$work/calibrate.log" | sed 's/^calibrate: //'
grep 'makespan' "$work/trace.log" | tail -6
tail -3 "$work/set-stderr.log" 2>/dev/null
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
