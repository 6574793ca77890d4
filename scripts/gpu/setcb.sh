#!/usr/bin/env bash
# SET's host callbacks (issue #18, session 18): set-4 is ~2x slower in some
# GPU leases than in others, and in GPU traces each job's host function
# spans 27-29 us of its stream with hardly two at once; the simulator shares
# one callback-thread wake among the host functions queued behind it. One
# lease, two processes of each: `paper set run` of setcb-gpu.yaml (sobel and
# gemm, synchronous, queue-4, set-4, set-8, setplus-4, setbatch16-4: the
# process's SET mode) and calibrate --only "host functions over streams"
# (calibrate/hostfuncstreams.go: host functions ready on 1-8 streams at once
# or 5-60 us apart, each one's span on its stream; SET's dispatcher loop
# with a kernel for the graph over 1-8 streams) with "host callbacks"; the
# second calibrate adds "copies" (this lease's copy latency, the H200's
# short synchronize waits).
#
# Build here (one binary: the carry limit):
#   mkdir -p .gpu/setcb && go build -tags cuda -ldflags='-s -w' -o .gpu/setcb/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/setcb/BUILD; xz -9 -f .gpu/setcb/gpusched
# There (no Go), from the repository root, carrying .gpu/setcb:
#   OUT=$OUT bash scripts/gpu/setcb.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/setcb.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/setcb/gpusched),
# CAL_TIMEOUT (default 15 s), RUN_TIMEOUT (default 20 s).
# Comes back: $OUT/setcb-<gpu>.tgz: device.txt, p1/ and p2/ (set/results.json
# and logs of each paper run), <gpu>-hostfuncs1.json / .md, <gpu>-hostfuncs2.json
# / .md, calibrate.log (the last calibrate's) and calibrate1.log.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-15}
RUN_TIMEOUT=${RUN_TIMEOUT:-20}
BIN=${BIN:-.gpu/setcb/gpusched}

. scripts/gpu/device-tag.sh
script_start setcb --host-record

rc=0
config=$(experiment_on_device configs/experiments/setcb-gpu.yaml)
mkdir -p "$work/p1" "$work/p2"
paper_run set "$config" "$RUN_TIMEOUT" "$work/p1" || rc=$?
calibrate_step "calibrate 1" hostfuncs1 "host functions over streams" "host callbacks"
mv "$work/calibrate.log" "$work/calibrate1.log"
paper_run set "$config" "$RUN_TIMEOUT" "$work/p2" || rc=$?
calibrate_step "calibrate 2" hostfuncs2 "host functions over streams" "host callbacks" copies
script_pack setcb

echo "== setcb on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep -h '^paper set run:\|^calibrate\|^total' "$work/device.txt" "$work/p1/device.txt" "$work/p2/device.txt"
for p in p1 p2; do
    python3 - "$work/$p/set/results.json" "$p" <<'PY' || true
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print(f'{sys.argv[2]} {r["workload"]:16s} {r["scheduler"]:14s} makespan {r["makespan_us"]["median"]:9.1f} us')
PY
done
for l in calibrate1.log calibrate.log; do
    echo "-- $l"
    grep -h 'streams, 0 us apart: [fml]\|on 1 streams, 0 us apart: next\|on 2 streams, .* apart: last span\|loop, 4 streams\|loop, 8 streams\|host callback duration\|copy latency' "$work/$l" | sed 's/^calibrate: //'
done
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
