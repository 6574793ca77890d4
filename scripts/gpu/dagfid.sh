#!/usr/bin/env bash
# The synthetic DAG campaign's host costs in one GPU session (issue #18:
# the fidelity-dags rows), in one tarball under $OUT:
#   1. the whole `gpusched calibrate` (every section, its last the new
#      "synchronizes over streams": after a short synth_node kernel, 8 of
#      them or a record on each of 2 to 64 streams, the host cost of
#      synchronizing each stream whose work completed unobserved, the same
#      again on the idle streams in turn, one stream again and again, and
#      a launch on each idle synchronized stream -> host.sync_switch_ns):
#      the same session's host costs beside the rows;
#   2. `gpusched sweep configs/experiments/fidelity-dags-gpu.yaml --param
#      repetitions=10`: the campaign's seven shapes under its ten
#      schedulers with today's code (round-robin plans in Prepare), 10
#      interleaved rounds.
#
# Run from the repository root, with the binary built by:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/dagfid/gpusched ./cmd/gpusched && gzip -f .gpu/dagfid/gpusched
#   OUT=/some/dir bash scripts/gpu/dagfid.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/dagfid.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/dagfid/gpusched,
# unpacked from BIN.gz when that is there), CAL_TIMEOUT (seconds, default
# 35), RUN_TIMEOUT (seconds, default 50), REPS (default 10).
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-35}
RUN_TIMEOUT=${RUN_TIMEOUT:-50}
REPS=${REPS:-10}

. scripts/gpu/device-tag.sh
script_start dagfid

rc=0
timed_step "calibrate" timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --raw "$work/$tag-calibrate.json" \
    --report "$work/$tag-calibrate.md" -o "$work/$tag-fitted.yaml" 2>"$work/calibrate.log"

# The rows: the committed experiment file on the GPU (its devices are
# cuda); a dry run rewrites the device.
exp=configs/experiments/fidelity-dags-gpu.yaml
if [ "$DEVICE" != cuda ]; then
    sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" "$exp" >"$work/fidelity-dags-gpu.yaml"
    exp=$work/fidelity-dags-gpu.yaml
fi
t0=$(date +%s)
timeout "$RUN_TIMEOUT" "$BIN" sweep "$exp" --param repetitions="$REPS" -o "$work/dags" >"$work/run.log" 2>&1
r=$?
[ "$r" = 0 ] || rc=$r
rm -f "$work/dags/"*.svg "$work/dags/"*.pdf
echo "rows: exit $r in $(($(date +%s) - t0))s" >>"$work/device.txt"
script_pack dagfid

# Summary, last.
echo "== dagfid on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate:\|^rows:\|^total' "$work/device.txt"
grep -h 'launch API\|event record cost\|stream wait cost\|synchronize call\|synchronize after a kernel\|synchronize again\|unobserved\|launch on a synchronized' "$work/calibrate.log" | cut -c1-90
grep -A72 '^repetitions' "$work/run.log" | cut -c1-90 | tail -72
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
