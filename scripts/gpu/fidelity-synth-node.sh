#!/usr/bin/env bash
# Two measurements for the simulator's fidelity on the synthetic DAGs
# (issue #18), in one tarball under $OUT:
#   - `gpusched calibrate --only "cross-stream dependencies"`: chains of
#     20 us spin kernels over 2, 4 and 8 streams, each waiting on an event
#     recorded behind the one before, against the same chain on one stream
#     (front_end.event_wait_ns: what a dependency through an event on
#     another stream adds to the back-to-back gap), and `--only "captured
#     chains over streams"`: the host cost per kernel of capturing and
#     instantiating such chains on 1 and 8 streams (graph-per-step's costs);
#   - `gpusched profile` of configs/experiments/synth-node-profile-gpu.yaml:
#     synth_node alone at 16 to 4,096 iterations and swept over forced
#     occupancies 1 to 15 at the big shape's grids (256 and 1,024 iterations).
#
# Run from the repository root, with the binary built here:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/fidelity/gpusched ./cmd/gpusched && gzip -f .gpu/fidelity/gpusched
#   OUT=/some/dir bash scripts/gpu/fidelity-synth-node.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/fidelity-synth-node.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/fidelity/gpusched,
# unpacked from BIN.gz when that is there), CAL_TIMEOUT and
# PROFILE_TIMEOUT (seconds, default 40 and 60).
# Back here: docs/results/calibration-h100.md ("Cross-stream waits and
# synth_node's iterations") has the refit commands.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-40}
PROFILE_TIMEOUT=${PROFILE_TIMEOUT:-60}

BIN=${BIN:-.gpu/fidelity/gpusched}
. scripts/gpu/device-tag.sh
script_start fidelity-synth-node

t0=$(date +%s)
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "cross-stream dependencies" --only "captured chains over streams" \
    --raw "$work/$tag-xstream.json" --report "$work/$tag-xstream.md" 2>"$work/calibrate.log"
cal_rc=$?
cal_s=$(($(date +%s) - t0))

t0=$(date +%s)
timeout "$PROFILE_TIMEOUT" "$BIN" profile --device "$DEVICE" --max-occupancies 15 --deadline "$((PROFILE_TIMEOUT - 15))s" \
    -o "$work/$tag-synth-profile.yaml" configs/experiments/synth-node-profile-gpu.yaml \
    >"$work/profile-fit.txt" 2>"$work/profile.log"
prof_rc=$?
prof_s=$(($(date +%s) - t0))

echo "calibrate: exit $cal_rc in ${cal_s}s; profile: exit $prof_rc in ${prof_s}s; total $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/fidelity-synth-node-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

# Summary, last.
echo "== fidelity-synth-node on $tag ($DEVICE)"
head -2 "$work/device.txt"
echo "calibrate: exit $cal_rc, ${cal_s}s"
grep '^calibrate: ' "$work/calibrate.log"
echo "profile: exit $prof_rc, ${prof_s}s"
tail -1 "$work/profile.log"
cat "$work/profile-fit.txt"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$cal_rc" = 0 ] && [ "$prof_rc" = 0 ]
