#!/usr/bin/env bash
# Kernels in sequence against kernels alone (issue #18: the simulator runs
# AutoGraph's models 16-34% faster than the GPU, a bias in kernel times),
# in one tarball under $OUT:
#  1. `gpusched run configs/experiments/autograph-kernels-gpu.yaml`: the five
#     models on one stream, eager and captured, with a timeline of each row
#     (the eager one's kernel spans are the kernels' times in sequence);
#  2. `gpusched profile` of the kernels of autograph-rerun-gpu.yaml at every
#     size they launch (--max-sizes 400), each alone, at their own
#     occupancy and one forced one, for at most PROFILE_S seconds.
#
# Run from the repository root, with the binary built here:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/s6/gpusched ./cmd/gpusched && gzip -f .gpu/s6/gpusched
#   OUT=/some/dir bash scripts/gpu/kernel-sequence.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=h100 bash scripts/gpu/kernel-sequence.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/s6/gpusched, unpacked
# from BIN.gz when that is there), PROFILE_S (default 240).
set -uo pipefail

PROFILE_S=${PROFILE_S:-240}

BIN=${BIN:-.gpu/s6/gpusched}
. scripts/gpu/device-tag.sh
script_start kernel-sequence
[ -f "$(dirname "$BIN")/BUILD" ] && cp "$(dirname "$BIN")/BUILD" "$work/BUILD"

exp=configs/experiments/autograph-kernels-gpu.yaml
if [ "$DEVICE" != cuda ]; then # a dry run: the same rows on the simulator config
    sed "s/devices: \[cuda\]/devices: [$DEVICE]/" "$exp" >"$work/exp.yaml"
    exp=$work/exp.yaml
fi
t0=$(date +%s)
timeout 200 "$BIN" run "$exp" -o "$work/sequence" >"$work/sequence.txt" 2>"$work/sequence.log"
run_rc=$?
run_s=$(($(date +%s) - t0))

t0=$(date +%s)
timeout $((PROFILE_S + 60)) "$BIN" profile --device "$DEVICE" --max-sizes 400 --max-occupancies 1 \
    --budget $((PROFILE_S / 3))s --deadline "${PROFILE_S}s" -o "$work/$tag-profile-autograph.yaml" \
    configs/experiments/autograph-rerun-gpu.yaml >"$work/profile.txt" 2>"$work/profile.log"
prof_rc=$?
prof_s=$(($(date +%s) - t0))

echo "run: exit $run_rc in ${run_s}s; profile: exit $prof_rc in ${prof_s}s; total $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/kernel-sequence-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

echo "== kernel-sequence on $tag ($DEVICE)"
head -2 "$work/device.txt"
cat "$work/sequence.txt"
tail -3 "$work/profile.log"
echo "run: exit $run_rc (${run_s}s), profile: exit $prof_rc (${prof_s}s)"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$run_rc" = 0 ] && [ "$prof_rc" = 0 ]
