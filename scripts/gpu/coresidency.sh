#!/usr/bin/env bash
# What two DIFFERENT kernels co-resident on every SM cost each other (issue
# #18: the residency rate model applies one symmetric co-residency factor),
# in one tarball under $OUT: `gpusched profile pairs` takes, from the
# profiled workloads, a compute-bound GEMM tile kernel (tiles_gemm_128x128,
# GPT-3 MLP), a memory-bound elementwise kernel (nn_binary), a reduction
# (nn_global_avgpool), a convolution (nn_conv2d), the synthetic DAG node
# (synth_node) and a pure spinner (cal_spin_stamp), cuts each one's grid to a
# whole number of blocks per SM (half its occupancy alone, at most 4, lowered
# until both of a pair fit one SM together), and for every ordered pair (and
# each kernel beside itself) times each alone and both released at once on
# two streams (7 rounds after a warm-up), with %smid/globaltimer stamps of
# the spinner's blocks (or of a shadow pair of spinners shaped like the
# pair) showing which SMs held both.
#
# Run from the repository root, with the binary built by:
#   go build -tags cuda -o .gpu/tailwave/gpusched ./cmd/gpusched && xz -9 -f .gpu/tailwave/gpusched
#   OUT=/some/dir bash scripts/gpu/coresidency.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml bash scripts/gpu/coresidency.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/tailwave/gpusched,
# unpacked from BIN.xz with python3's lzma when that is there), PAIRS_TIMEOUT
# (seconds, default 100), SPIN_SHARED (bytes of dynamic shared memory,
# comma-separated: one more spinner for each, spinNk, beside every kernel;
# session 10's carve-out probe: SPIN_SHARED=20000,70000; the tarball is then
# coresidency-shared-TAG.tgz).
set -uo pipefail

PAIRS_TIMEOUT=${PAIRS_TIMEOUT:-100}
SPIN_SHARED=${SPIN_SHARED:-}
shared_args=() name=coresidency
if [ -n "$SPIN_SHARED" ]; then
    shared_args=(--spin-shared "$SPIN_SHARED") name=coresidency-shared
fi

BIN=${BIN:-.gpu/tailwave/gpusched}
. scripts/gpu/device-tag.sh
script_start coresidency

t0=$(date +%s)
timeout "$PAIRS_TIMEOUT" "$BIN" profile pairs --device "$DEVICE" "${shared_args[@]}" -o "$work/$tag-pairs.json" \
    configs/experiments/cusync-gpu.yaml configs/experiments/heldout-dnn-gpu.yaml \
    configs/experiments/synth-node-profile-gpu.yaml >"$work/$tag-pairs.txt" 2>"$work/pairs.log"
rc=$?
echo "profile pairs: exit $rc in $(($(date +%s) - t0))s" >>"$work/device.txt"
script_pack "$name"

echo "== $name on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^profile pairs:\|^total' "$work/device.txt"
sed 's/^ *//' "$work/$tag-pairs.txt" | cut -c1-150
tail -2 "$work/pairs.log" | cut -c1-150
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
