#!/usr/bin/env bash
# Measures a GPU for the simulator (issue #18): `gpusched calibrate` (host,
# front-end, copy, stream, hand-off and graph costs, every round kept as
# JSON) and `gpusched profile` (every distinct kernel launch of the papers'
# GPU experiment files and the fidelity campaign's files, timed alone at
# its own and at forced occupancies). Everything goes into one tarball
# under $OUT, named by device; a short summary is printed last.
#
# Run from the repository root, with the binary built here:
#   go build -tags cuda -o .gpu/gpusched ./cmd/gpusched
#   OUT=/some/dir bash scripts/gpu/fidelity-calibrate.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/fidelity-calibrate.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/gpusched),
# CAL_TIMEOUT and PROFILE_TIMEOUT (seconds, default 90 and 150),
# PROFILE_BUDGET (device time for optional profile points, default 40s).
# Back here: gpusched calibrate fit (docs/SIMULATOR.md, "Calibrating").
set -uo pipefail

: "${OUT:?set OUT to the directory the tarball goes to}"
DEVICE=${DEVICE:-cuda}
BIN=${BIN:-.gpu/gpusched}
CAL_TIMEOUT=${CAL_TIMEOUT:-90}
PROFILE_TIMEOUT=${PROFILE_TIMEOUT:-150}
PROFILE_BUDGET=${PROFILE_BUDGET:-40s}
start=$(date +%s)

if [ ! -x "$BIN" ]; then
    echo "fidelity-calibrate: no binary at $BIN (go build -tags cuda -o .gpu/gpusched ./cmd/gpusched)" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Which device: the output files are named by it.
. scripts/gpu/device-tag.sh
device_tag "$work/device.txt"

files=(configs/experiments/*-gpu*.yaml)
for f in configs/experiments/fidelity-*.yaml; do
    case " ${files[*]} " in *" $f "*) continue ;; esac
    [ -e "$f" ] && files+=("$f")
done
printf '%s\n' "${files[@]}" >"$work/profile-files.txt"

t0=$(date +%s)
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" -o "$work/$tag-calibrated.yaml" \
    --raw "$work/$tag-calibrate.json" --report "$work/$tag-calibrate.md" 2>"$work/calibrate.log"
cal_rc=$?
cal_s=$(($(date +%s) - t0))

t0=$(date +%s)
timeout "$PROFILE_TIMEOUT" "$BIN" profile --device "$DEVICE" --budget "$PROFILE_BUDGET" --deadline "$((PROFILE_TIMEOUT - 30))s" \
    -o "$work/$tag-profile.yaml" "${files[@]}" >"$work/profile-fit.txt" 2>"$work/profile.log"
prof_rc=$?
prof_s=$(($(date +%s) - t0))

{
    echo "calibrate: exit $cal_rc in ${cal_s}s; profile: exit $prof_rc in ${prof_s}s; total $(($(date +%s) - start))s"
} >>"$work/device.txt"
tarball="$OUT/fidelity-calibrate-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

# Summary, last.
echo "== fidelity-calibrate on $tag ($DEVICE)"
head -2 "$work/device.txt"
echo "calibrate: exit $cal_rc, ${cal_s}s; $(grep -c '^calibrate: ' "$work/calibrate.log") lines of progress"
tail -3 "$work/calibrate.log"
echo "profile: exit $prof_rc, ${prof_s}s"
tail -2 "$work/profile.log"
[ -s "$work/profile-fit.txt" ] && sort -t'|' -k1 "$work/profile-fit.txt" | head -3
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$cal_rc" = 0 ] && [ "$prof_rc" = 0 ]
