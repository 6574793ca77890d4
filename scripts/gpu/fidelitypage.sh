#!/usr/bin/env bash
# The fidelity page on a lent machine's CPUs (no GPU used): make
# fidelity-page's command with the carried binary, under a time limit. A
# call cut short packs the simulated files' cache ($OUT/cache.tgz); unpack it
# into .cache/validate here and carry that folder in the next call, which
# then simulates only the files left (the cache key includes the binary's
# SHA-256: use the same binary).
#
# Build here (no docs/results/raw is needed there):
#   mkdir -p .gpu/fp && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/fp/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/fp/BUILD; xz -9 -f .gpu/fp/gpusched
# There, from the repository root, carrying .gpu/fp (and .cache/validate):
#   OUT=$OUT bash scripts/gpu/fidelitypage.sh
# Comes back: $OUT/fidelity.md, fidelity-rows.csv, fidelity-datasheet-rows.csv
# (copy them to docs/results/), validate.log, device.txt; or cache.tgz.
set -uo pipefail

LIMIT=${LIMIT:-585} # the page took 500-540 s on an H200 host's 16 CPUs (session 30)
TAG=fp
. scripts/gpu/lease.sh
cp "$W/device.txt" "$W/BUILD" "$OUT/" 2>/dev/null
mkdir -p .cache/validate
defaults=() # as make fidelity-page
while read -r d; do
  case "$d" in '#'* | '') continue ;; esac
  defaults+=(--scheduler-default "$d")
done < docs/results/fidelity-defaults.txt
timeout "$LIMIT" "$BIN" validate $(ls docs/results/*-gpu*.json | LC_ALL=C sort) "${defaults[@]}" \
  --compare-variant datasheet --cache .cache/validate --page "$OUT/fidelity.md" \
  --limits docs/results/fidelity-regression.yaml > "$OUT/validate.log" 2>&1
rc=$?
echo "validate rc=$rc"
[ "$rc" = 0 ] || tar czf "$OUT/cache.tgz" .cache/validate
