#!/usr/bin/env bash
# Does a kernel that waits on a copy (or a copy on a kernel) pay more on
# the GPU than the simulator charges, and only when queued? (issue #18,
# session 32): behind a gate, jobs of a copy in and an empty kernel cost an
# H200 13.1 us each against 8.9 simulated, while SET's synchronous rows
# (the same jobs issued live, a synchronize after each) are simulated 9%
# slow already. One lease:
#  1. `gpusched calibrate --only "copies and kernels issued live"`
#     (calibrate/copykernellive.go), three times (three processes): a copy then a
#     kernel, and a kernel then a copy, the second issued 0-20 us after
#     the first or both behind a gate; the copy and the kernel alone; 8
#     jobs issued live with a synchronize after each or one at the end; the
#     gated pairs again on 8 fresh streams, one after the other;
#  2. `--only "copies around kernels in a graph"` (session 31) again: the
#     same lease's queued jobs;
#  3. `--only "waits across engines"` (calibrate/crossengine.go), twice: a
#     copy issued 0-14 us after a 5 or 20 us kernel (and a kernel after a
#     512 KiB copy, a copy in after a copy out, a kernel after a kernel;
#     a copy and a kernel on a second stream behind an event wait) in 1 us
#     steps, to show the
#     period at which a command waiting on another engine is looked at.
#
# Build here:
#   mkdir -p .gpu/ck && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/ck/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/ck/BUILD; xz -9 -f .gpu/ck/gpusched
# There, from the repository root, carrying .gpu/ck:
#   OUT=$OUT bash scripts/gpu/copykernellive.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h200.yaml BIN=/tmp/gpusched bash scripts/gpu/copykernellive.sh
# Comes back: $OUT/ck-<gpu>.tgz with device.txt, BUILD, each probe's raw
# JSON, report and log.
set -uo pipefail

DEVICE=${DEVICE:-cuda}
CAL_TIMEOUT=${CAL_TIMEOUT:-180}
TAG=ck
. scripts/gpu/lease.sh
probe "copies and kernels issued live" ckl
probe "copies and kernels issued live" ckl2
probe "copies and kernels issued live" ckl3
probe "copies around kernels in a graph" cj
probe "waits across engines" ce
probe "waits across engines" ce2
tar czf "$OUT/ck-$gpu.tgz" -C "$W" .
cat "$W/rc.txt"
