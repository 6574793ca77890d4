#!/usr/bin/env bash
# Do a graph's copies with kernels between them pay the whole copy latency?
# (issue #18, session 31): the tournament's serial+graph rows on SET's jobs
# ran as long as serial on the GPU, 33-53% longer than simulated. One lease:
#  1. `gpusched calibrate --only "copies around kernels in a graph"`
#     (calibrate/graphcopyjobs.go): chains of 1-8 jobs (a 64 KiB copy in,
#     an empty or 5/20 us kernel, a copy out or not), as a graph and on the
#     stream, behind a gate;
#  2. `--only "copies in a graph"` again (session 27), the same lease's
#     copies with nothing between them;
#  3. `gpusched run configs/experiments/graph-copies-gpu.yaml`: six job
#     pipelines of sizes no other experiment runs under serial,
#     serial+graph, KeSCo (+graph), IOS and Queue (the model's check).
#
# Build here:
#   mkdir -p .gpu/gj && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/gj/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/gj/BUILD; xz -9 -f .gpu/gj/gpusched
# There, from the repository root, carrying .gpu/gj:
#   OUT=$OUT bash scripts/gpu/graphcopyjobs.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/graphcopyjobs.sh
# Comes back: $OUT/gj-<gpu>.tgz with device.txt, BUILD, each probe's raw
# JSON, report and log, and the experiment's results directory.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-180}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
TAG=gj
. scripts/gpu/lease.sh
probe "copies around kernels in a graph" cj
probe "copies in a graph" gc
exp=configs/experiments/graph-copies-gpu.yaml
if [ "$DEVICE" != cuda ]; then
  sed "s#devices: \[cuda\]#devices: [$(basename "$DEVICE" .yaml)]#" "$exp" > "$W/exp.yaml"
  exp=$W/exp.yaml
fi
timeout "$RUN_TIMEOUT" "$BIN" run "$exp" -o "$W/graph-copies" > "$W/run.log" 2>&1
echo "run rc=$?" >> "$W/rc.txt"
tar czf "$OUT/gj-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
