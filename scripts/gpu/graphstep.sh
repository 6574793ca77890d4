#!/usr/bin/env bash
# What a graph-per-step step costs on the GPU (issue #18: the DAG
# campaign's graph-per-step rows, 177-669 us a step that the simulator
# does not charge), in one tarball under $OUT: `gpusched calibrate --only`
# of the same session's host API costs, small graphs' costs and graph
# builds over streams (the config's capture, instantiate and launch
# figures, for the same host), then "graph steps": for the campaign's
# seven shapes (chain, wide, tiny, big, mixed, diamond, copies; seed 1, 8
# streams) and layered DAGs of 8 to 512 short kernels on 1, 8 and 64
# branches, each part of one isolated step on the host (planning, capture
# begin, the captured commands, capture end, instantiate, graph destroy,
# first and later launch calls, the synchronize after a launch, exec
# destroy) and the device (a fresh exec's first launch and a later one,
# behind a gate), GraphPerStep's whole Run as the campaign times it, and
# its loop timed part by part.
#
# Run from the repository root, with the binary built by:
#   go build -tags cuda -o .gpu/dagfid/gpusched ./cmd/gpusched && gzip -9 -f .gpu/dagfid/gpusched
#   OUT=/some/dir bash scripts/gpu/graphstep.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/graphstep.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/dagfid/gpusched,
# unpacked from BIN.gz when that is there), CAL_TIMEOUT (seconds, default
# 90).
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-90}

BIN=${BIN:-.gpu/dagfid/gpusched}
. scripts/gpu/device-tag.sh
script_start graphstep

t0=$(date +%s)
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "host API costs" --only graphs \
    --only "graph builds over streams" --only "graph steps" \
    --raw "$work/$tag-graphsteps.json" --report "$work/$tag-graphsteps.md" 2>"$work/calibrate.log"
rc=$?
echo "calibrate: exit $rc in $(($(date +%s) - t0))s" >>"$work/device.txt"
script_pack graphstep

# Summary, last: per shape, the scheduler's run and the isolated step's parts.
echo "== graphstep on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate:\|^total' "$work/device.txt"
grep -h '^calibrate: graph step, ' "$work/calibrate.log" | sed 's/^calibrate: graph step, //' |
    grep "scheduler's run\|: captured commands\|: instantiate \|first launch's device\|later launch's device" |
    grep -v '^sweep' | cut -c1-80
grep -h '^calibrate: graph step, sweep' "$work/calibrate.log" | grep "scheduler's run" | cut -c24-100
tail -1 "$work/calibrate.log" | cut -c1-100
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
