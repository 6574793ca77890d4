#!/usr/bin/env bash
# Which call of the runner's per-repetition reset makes the next kernel
# slow, and which launches pay it (issue #18, session 16; session 15's
# traces, docs/results/raw/dagfast-*.tgz, show the first kernel of every
# timed run 8-18 us longer than its twin later in the run). One lease:
#  1. `gpusched calibrate --only "host API costs" --only "launch latency,
#     back-to-back gap, wake-up" --only "per-run reset"`: this lease's
#     launch figures, and calibrate/perrun.go: a 10 us kernel launched right
#     after each candidate call (nothing, cuCtxSynchronize, 500 us idle,
#     8 MiB of host memory writes (no CUDA call),
#     cuMemFreeHost, cuMemFree, cuMemAllocHost, cuMemAlloc, pageable
#     alloc+free, HtoD/DtoH copies on another stream, an HtoD copy on the
#     kernel's stream, a stream create+destroy, the runner's reset with a
#     fresh and with a kept staging buffer) as a stream launch, a graph
#     launch, and a stream launch whose twin runs on a second stream; first
#     less twin on the host, in the launch call and between events.
#  2. `gpusched trace` of two cuSync rows of heldout5-cusync-gpu.yaml
#     (gpt3 T=128 under stream-sync and row): does a cuSync run's first
#     kernel pay it too.
#
# Build here (one binary):
#   mkdir -p .gpu/perrun && go build -tags cuda -ldflags='-s -w' -o .gpu/perrun/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/perrun/BUILD; xz -9 -f .gpu/perrun/gpusched
# There (no Go), from the repository root, carrying .gpu/perrun:
#   OUT=$OUT bash scripts/gpu/perrun.sh
# Dry run on the simulator (same binary, built without -tags cuda):
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/perrun.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/perrun/gpusched),
# CAL_TIMEOUT (default 40 s), TRACE_TIMEOUT (per trace, default 60 s: a
# cuSync trace on the GPU runs the serial reference and checks its sampled
# rows against the CPU's GEMMs; 10 s timed out on both GPUs in session 16).
# Comes back: $OUT/perrun-<gpu>.tgz: device.txt, <gpu>-perrun.json / .md,
# traces/*.json.gz, logs.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-40}
TRACE_TIMEOUT=${TRACE_TIMEOUT:-60}
CONFIG=configs/experiments/heldout5-cusync-gpu.yaml

BIN=${BIN:-.gpu/perrun/gpusched}
. scripts/gpu/device-tag.sh
script_start perrun --host-record

rc=0
calibrate_step "calibrate" perrun "host API costs" "launch latency, back-to-back gap, wake-up" "per-run reset"

config="$work/$(basename "$CONFIG")"
sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" "$CONFIG" >"$config"
mkdir -p "$work/traces"
for s in stream-sync row; do
    f="$work/traces/gpt3-T128-$s.json"
    timed_step "trace $s" timeout "$TRACE_TIMEOUT" "$BIN" trace "$config" --device "$DEVICE" \
        --workload "gpt3 T=128" --scheduler "$s" -o "$f" >>"$work/trace.log" 2>&1
    gzip -f "$f" 2>/dev/null
done

script_pack perrun

# Summary, last.
echo "== perrun on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate:\|^trace \|^total' "$work/device.txt"
grep -h 'launch API cost\|launch latency' "$work/calibrate.log" | head -4
grep -h 'first less twin' "$work/calibrate.log" | grep -v 'launch call\|device span'
grep 'makespan' "$work/trace.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
