#!/bin/bash
# The held-out imports (issue #19's independent check,
# docs/results/imported-heldout.md) replayed with the ninth replay kernel,
# the one main adopted in session 9: configs/experiments/imported-heldout-v9-gpu.yaml
# (eager traces with execution traces, every applicable scheduler) at the
# ninth's measured 384/1023 and imported-graph-heldout-v9-gpu.yaml
# (graph-replay traces, serial and serial+graph) at 160/799. From the
# repository root, with $OUT set and no Go toolchain; about 60 s on an H100.
# Everything lands in $OUT/imported-heldout-v9.tgz.
#
#   go build -tags cuda -ldflags='-s -w' -o .gpu/heldout-v9/gpusched ./cmd/gpusched && xz -9 .gpu/heldout-v9/gpusched
#
# usage: B=.gpu/heldout-v9 [LIMIT=200] bash scripts/gpu/imported-heldout-v9.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run.
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/heldout-v9}
DEV=${1:-cuda}
LIMIT=${LIMIT:-200}
R=$OUT/imported-heldout-v9
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack gpusched
imported_build_txt
[ "$DEV" = cuda ] && imported_device_txt

run_one imported-heldout-v9 "$B/gpusched" configs/experiments/imported-heldout-v9-gpu.yaml "384 1023" 120
run_one imported-graph-heldout-v9 "$B/gpusched" configs/experiments/imported-graph-heldout-v9-gpu.yaml "160 799" 60
log done
find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf "$OUT/imported-heldout-v9.tgz" -C "$OUT" imported-heldout-v9 && rm -rf "$R"
