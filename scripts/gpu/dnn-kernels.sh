#!/usr/bin/env bash
# DNN kernels in sequence (issue #18, session 15; the H100's DNN rows are
# simulated 5-11% fast, the H200's are not, and inception-v3-s4 is simulated
# slow on both): configs/experiments/dnn-kernels-gpu.yaml on the GPU, with a
# timeline of each row, in one tarball $OUT/dnn-kernels-TAG.tgz (device.txt,
# run/ with results.json and timelines/, run.txt, run.log). Set each long
# kernel's span beside the simulator's timeline of the same row
# (`gpusched run` of the same file with devices: [h100]).
#
# Run from the repository root, with the binary built here:
#   mkdir -p .gpu/dnnkernels && go build -tags cuda -ldflags='-s -w' -o .gpu/dnnkernels/gpusched ./cmd/gpusched && gzip -f .gpu/dnnkernels/gpusched
#   OUT=/some/dir bash scripts/gpu/dnn-kernels.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/path/to/gpusched bash scripts/gpu/dnn-kernels.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/dnnkernels/gpusched,
# unpacked from BIN.gz when that is there).
set -uo pipefail

. scripts/gpu/device-tag.sh
script_start dnnkernels
rc=0

exp=$(experiment_on_device configs/experiments/dnn-kernels-gpu.yaml)
timed_step run timeout 140 "$BIN" run "$exp" -o "$work/run" >"$work/run.txt" 2>"$work/run.log"
script_pack dnn-kernels

echo "== dnn-kernels on $tag ($DEVICE)"
head -2 "$work/device.txt"
cat "$work/run.txt"
tail -3 "$work/device.txt"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
exit "$rc"
