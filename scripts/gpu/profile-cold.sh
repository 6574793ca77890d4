#!/usr/bin/env bash
# Cold-L2 kernel profile (issue #18, the L2 cache across kernels): `gpusched
# profile --cold-l2` of the KeSCo, AutoGraph (DNN) and tournament GPU
# experiments, in one tarball under $OUT. Every point is measured as
# profile-all.sh measures it (back-to-back launches, inputs warm in L2: ns)
# and also cold: before each of 5 single launches a device-to-device copy
# between two scratch buffers of twice the L2 cache evicts the inputs
# (cold_ns), and the same launch right after times it warm at one launch
# (rewarm_ns). KeSCo's experiments go first: the profile stops measuring at
# its deadline (MAIN_S seconds) and still writes what it measured. The
# held-out files (heldout*) are left out, so that they stay held out.
#
# Run from the repository root, with the binary built here:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/profiles/gpusched ./cmd/gpusched && gzip -f .gpu/profiles/gpusched
#   OUT=/some/dir bash scripts/gpu/profile-cold.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=h100 bash scripts/gpu/profile-cold.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/profiles/gpusched,
# unpacked from BIN.gz when that is there), MAIN_S (default 110).
set -uo pipefail

MAIN_S=${MAIN_S:-110}

BIN=${BIN:-.gpu/profiles/gpusched}
. scripts/gpu/device-tag.sh
script_start profile-cold
[ -f "$(dirname "$BIN")/BUILD" ] && cp "$(dirname "$BIN")/BUILD" "$work/BUILD"

e=configs/experiments
files=($e/kesco-gpu.yaml $e/kesco-gpu-h100.yaml $e/autograph-gpu.yaml $e/tournament-gpu.yaml)
for f in "${files[@]}"; do
    [ -f "$f" ] || { echo "profile-cold: $f is missing" >&2; exit 2; }
done
printf '%s\n' "${files[@]}" >"$work/profile-files.txt"

t0=$(date +%s)
timeout $((MAIN_S + 60)) "$BIN" profile --device "$DEVICE" --cold-l2 --max-sizes 1000000 --bind-bytes 1000000000000 \
    --budget 1000s --deadline "${MAIN_S}s" -o "$work/$tag-cold-profile.yaml" "${files[@]}" \
    >"$work/profile-fit.txt" 2>"$work/profile.log"
main_rc=$?
main_s=$(($(date +%s) - t0))

echo "cold profile: exit $main_rc in ${main_s}s; total $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/profile-cold-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

echo "== profile-cold on $tag ($DEVICE)"
head -2 "$work/device.txt"
tail -1 "$work/profile.log"
echo "cold profile: exit $main_rc (${main_s}s)"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$main_rc" = 0 ]
