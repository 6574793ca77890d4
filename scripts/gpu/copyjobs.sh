#!/usr/bin/env bash
# What does a copy queued behind other streams' copies wait? (issue #18,
# session 31): KeSCo's streams on SET's job pipelines run 16-59% faster on
# the GPU than simulated, the simulated rows bound by copies that each wait
# copy.latency_ns. One lease:
#  1. `gpusched calibrate --only "copy jobs over streams"`
#     (calibrate/graphcopyjobs.go): 32 jobs of 64 KiB copies (in, empty
#     kernel, out; in, out; in alone) round-robin over 1, 2, 4, 8 streams
#     behind a 1 ms gate;
#  2. `--only "copies one way on many streams"` (session 26) and
#     `--only "copies around kernels in a graph"` again: the same lease's
#     copies at once and one stream's jobs.
#
# Build here:
#   mkdir -p .gpu/cs && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/cs/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/cs/BUILD; xz -9 -f .gpu/cs/gpusched
# There, from the repository root, carrying .gpu/cs:
#   OUT=$OUT bash scripts/gpu/copyjobs.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/copyjobs.sh
# Comes back: $OUT/cs-<gpu>.tgz with device.txt, BUILD, each probe's raw
# JSON, report and log.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-180}
TAG=cs
. scripts/gpu/lease.sh
probe "copy jobs over streams" cs
probe "copies one way on many streams" cf
probe "copies around kernels in a graph" cj
tar czf "$OUT/cs-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
