#!/usr/bin/env bash
# gpusched's chunk-graph on an H200 (issue #18, session 29): the simulator
# gives its whole-pipeline graph a 555 us launch call on the tournament's SET
# pipelines and the H100 runs them in 541-751 us. One lease:
#  1. configs/experiments/chunk-graph-gpu.yaml, plain (5 repetitions);
#  2. the same with --timelines (each row's launch call and graph on the
#     timeline).
#
# Build here:
#   mkdir -p .gpu/cg && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/cg/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/cg/BUILD; xz -9 -f .gpu/cg/gpusched
# There, from the repository root, carrying .gpu/cg:
#   OUT=$OUT bash scripts/gpu/chunkgraph.sh
# Comes back: $OUT/cg-<gpu>.tgz with device.txt, BUILD, plain/ and tl/
# (results and timelines), and each run's stdout and stderr.
set -uo pipefail

RUN_TIMEOUT=${RUN_TIMEOUT:-200}
CONFIG=configs/experiments/chunk-graph-gpu.yaml
TAG=cg
. scripts/gpu/lease.sh
timeout "$RUN_TIMEOUT" "$BIN" run "$CONFIG" -o "$W/plain" > "$W/plain.stdout" 2> "$W/plain.stderr"; echo "plain rc=$?" >> "$W/rc.txt"
timeout "$RUN_TIMEOUT" "$BIN" run "$CONFIG" -o "$W/tl" --timelines > "$W/tl.stdout" 2> "$W/tl.stderr"; echo "tl rc=$?" >> "$W/rc.txt"
tar czf "$OUT/cg-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
