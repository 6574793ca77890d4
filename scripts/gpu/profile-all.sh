#!/usr/bin/env bash
# Re-profiles every kernel of the GPU experiments the kernel profiles
# (configs/profiles/h100.yaml, h200.yaml) were made from, at every distinct
# launch (scalar arguments included: a 1x7 and a 7x1 convolution are two
# points; issue #18), in one tarball under $OUT:
#  1. `gpusched profile` of the papers' and the fidelity campaign's GPU
#     experiments (the union of both profiles' source lines; the variant
#     experiments removed from configs/experiments run from their results
#     files) with the forced-occupancy sweeps as before (2 launches a kernel,
#     6 occupancies): $tag-profile.yaml;
#  2. `gpusched profile --max-occupancies 15` of
#     configs/experiments/synth-node-profile-gpu.yaml, as its first run:
#     $tag-synth-profile.yaml.
# Each step stops measuring at its deadline (MAIN_S, SYNTH_S seconds) and
# still writes what it measured.
#
# Run from the repository root, with the binary built here:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/profiles/gpusched ./cmd/gpusched && gzip -f .gpu/profiles/gpusched
#   OUT=/some/dir bash scripts/gpu/profile-all.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=h100 bash scripts/gpu/profile-all.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/profiles/gpusched,
# unpacked from BIN.gz when that is there), MAIN_S (default 330), SYNTH_S
# (default 60).
set -uo pipefail

MAIN_S=${MAIN_S:-330}
SYNTH_S=${SYNTH_S:-60}

BIN=${BIN:-.gpu/profiles/gpusched}
. scripts/gpu/device-tag.sh
script_start profile-all
[ -f "$(dirname "$BIN")/BUILD" ] && cp "$(dirname "$BIN")/BUILD" "$work/BUILD"

e=configs/experiments r=docs/results
files=(
    $e/acs-gpu-confirm.yaml $e/acs-gpu-lanes.yaml $e/acs-gpu.yaml
    $e/autograph-gpu.yaml $e/autograph-rerun-gpu.yaml
    $e/cusync-gpu.yaml $r/cusync-gpu-confirm.json $r/cusync-gpu-occupancy.json $r/cusync-gpu-phases.json
    $r/cusync-gpu-tailrows.json $r/cusync-gpu-tile2.json $r/cusync-gpu-tsweep.json
    $e/fidelity-dags-gpu.yaml $e/fidelity-dags-random-gpu.yaml
    $e/imported-gpu.yaml $e/imported-graph-gpu.yaml
    $e/kesco-gpu.yaml $e/quickstart-gpu.yaml
    $e/set-gpu.yaml $r/set-gpu-v2.json $r/set-gpu-v3.json $r/set-gpu-v4.json $r/set-gpu-v5.json $r/set-gpu-v6.json
    $r/set-gpu-v7.json $r/set-gpu-v8.json $r/set-gpu-v9.json $r/set-gpu-v10.json
    $e/tournament-gpu.yaml
)
for f in "${files[@]}" $e/synth-node-profile-gpu.yaml; do
    [ -f "$f" ] || { echo "profile-all: $f is missing" >&2; exit 2; }
done
printf '%s\n' "${files[@]}" >"$work/profile-files.txt"

# Every size (--max-sizes), every program bound (--bind-bytes), no device
# time budget short of the deadline (--budget).
t0=$(date +%s)
timeout $((MAIN_S + 60)) "$BIN" profile --device "$DEVICE" --max-sizes 1000000 --bind-bytes 1000000000000 \
    --budget 1000s --deadline "${MAIN_S}s" -o "$work/$tag-profile.yaml" "${files[@]}" \
    >"$work/profile-fit.txt" 2>"$work/profile.log"
main_rc=$?
main_s=$(($(date +%s) - t0))

t0=$(date +%s)
timeout $((SYNTH_S + 30)) "$BIN" profile --device "$DEVICE" --max-occupancies 15 --max-sizes 1000000 \
    --deadline "${SYNTH_S}s" -o "$work/$tag-synth-profile.yaml" $e/synth-node-profile-gpu.yaml \
    >"$work/synth-profile-fit.txt" 2>"$work/synth-profile.log"
synth_rc=$?
synth_s=$(($(date +%s) - t0))

echo "profile: exit $main_rc in ${main_s}s; synth profile: exit $synth_rc in ${synth_s}s; total $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/profile-all-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

echo "== profile-all on $tag ($DEVICE)"
head -2 "$work/device.txt"
tail -1 "$work/profile.log"
tail -1 "$work/synth-profile.log"
echo "profile: exit $main_rc (${main_s}s), synth profile: exit $synth_rc (${synth_s}s)"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$main_rc" = 0 ] && [ "$synth_rc" = 0 ]
