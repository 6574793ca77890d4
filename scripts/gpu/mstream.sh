#!/usr/bin/env bash
# What a multi-stream schedule costs beyond its calls' one-stream costs
# (issue #18, session 16). With session 15's measured untimed record
# (463/476 ns where the simulator charged 1,365/1,468) the random DAGs'
# multi-stream rows get 6-25% faster than the GPU, the more so the more
# streams a scheduler uses (rr2 < rr4 < rr8 < Nimble), serial and graphs
# unmoved: a cost per stream or per cross-stream edge that the old record
# cost hid. calibrate's interleaved-stream slopes cancel any cost per stream
# and run. This runs, on one lease, in one tarball under $OUT:
#   1. calibrate --only "runs over streams" (new: runs of 64 one-block spin
#      kernels of 2 and 20 us over 1-64 streams in four patterns - paths,
#      paths in a chain, round-robin chain, layers - each timed as the runner
#      times a run after a warm run: wall, issue, synchronizes in turn, each
#      call kind, a stream's first launch apart, device time behind a gate)
#      plus the sections it is read against on the same lease: "host API
#      costs", "synchronizes over streams" (host.sync_switch_ns), "cross-stream
#      dependencies", "chains interleaved over streams"
#      (front_end.event_wait_doubling_ns), "event records without timing"
#      -> <tag>-mstream.json / .md, calibrate.log
# About 15-30 s.
#
# Build (here): mkdir -p .gpu/mstream && go build -tags cuda -ldflags='-s -w' -o .gpu/mstream/gpusched ./cmd/gpusched \
#   && git log -1 --format='%H %s' > .gpu/mstream/BUILD && xz -9 -f .gpu/mstream/gpusched
# There (no Go), from the repository root, carrying .gpu/mstream:
#   OUT=$OUT bash scripts/gpu/mstream.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/mstream.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/mstream/gpusched),
# CAL_TIMEOUT (default 90 s). Back here: `gpusched calibrate check
# <tag>-mstream.json --sim CONFIG`; docs/results/calibration-h100.md
# ("Session 16: what a multi-stream run costs").
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-90}

. scripts/gpu/device-tag.sh
script_start mstream --host-record

rc=0
calibrate_step "calibrate streams" mstream "host API costs" "synchronizes over streams" \
    "cross-stream dependencies" "chains interleaved over streams" "event records without timing" \
    "runs over streams"
script_pack mstream

# Summary, last.
echo "== mstream on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate streams\|^total' "$work/device.txt"
sed 's/^calibrate: //' "$work/calibrate.log" | grep '^run over streams, \|synchronize after one\|gap\|doubling\|without timing\|launch API' || true
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
