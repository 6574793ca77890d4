#!/usr/bin/env bash
# SET-batch's chunk graphs over several worker streams (issue #18, session
# 11): on set-gpu-v10 SET-batch with 16-branch chunks is 42-68% slower on
# the GPU than simulated and slower on 8 workers than on 4 (sobel-256:
# 1466 us at b=4, 1830 us at b=8; simulated 540 and 579), less so with 4
# branches, least with one chain. SET-batch's 8 workers are not 8 host
# threads: one dispatcher launches each chunk graph on its worker's stream
# with a host function after it. This runs `gpusched calibrate --only
# "graph chunks over streams"` (16 warmed execs of the 16x4, 4x16 and 1x64
# chunk graphs launched round-robin over 1, 2, 4 and 8 streams, with and
# without a host function after each, timed behind a gate and as the host
# sees it; and as SET-batch's dispatcher issues them, each launch after its
# stream's previous completion's Put wakes it) with "stream concurrency" and "host callbacks" of the same host,
# then set-gpu-v10's sobel-256 and gemm-256 rows of those schedulers once
# (configs/experiments/setthreads-gpu.yaml: checked against, not fitted on).
# Session 12 adds --only "host API costs": the graph launch fields (fixed, per branch,
# per node, per copy node) of the same lease, which `gpusched calibrate
# fit-graph-launch` fits the chunk graphs' launch calls beside.
#
# Build here (one binary: the carry limit):
#   mkdir -p .gpu/setthreads && go build -tags cuda -ldflags='-s -w' -o .gpu/setthreads/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/setthreads/BUILD; xz -9 -f .gpu/setthreads/gpusched
# There (no Go), from the repository root, carrying .gpu/setthreads:
#   OUT=$OUT bash scripts/gpu/setthreads.sh
# Dry run on the simulator (same binary):
#   OUT=/tmp/x DEVICE=h100 BIN=/tmp/gpusched bash scripts/gpu/setthreads.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setthreads/gpusched,
# unpacked from BIN.xz or BIN.gz), CAL_TIMEOUT (default 60 s), RUN_TIMEOUT
# (default 90 s), SET (1: also run the SET rows; default 1).
# Comes back: $OUT/setthreads-<gpu>.tgz: device.txt, <gpu>-chunkstreams.json
# / .md (calibrate raw + report), calibrate.log, set/ (results.json,
# results.md, logs).
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}
RUN_TIMEOUT=${RUN_TIMEOUT:-90}
CONFIG=configs/experiments/setthreads-gpu.yaml

. scripts/gpu/device-tag.sh
script_start setthreads --host-record

rc=0
calibrate_step "calibrate" chunkstreams "stream concurrency" "host callbacks" "host API costs" \
    "graph chunks over streams"

if [ "${SET:-1}" = 1 ]; then
    paper_run set "$CONFIG" "$RUN_TIMEOUT" "$work" || rc=$?
fi
script_pack setthreads

# Summary, last.
echo "== setthreads on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^cpu:\|^calibrate:\|^paper set run:\|^total' "$work/device.txt"
grep -h 'chunk graph' "$work/calibrate.log" | sed 's/^calibrate: //'
tail -3 "$work/set-stderr.log" 2>/dev/null
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
