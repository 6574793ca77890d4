#!/usr/bin/env bash
# The twenty-first held-out ACS set and acsgap again (issue #18, session 33),
# one tarball under $OUT:
#   1. `gpusched run configs/experiments/heldout21-acs-gpu.yaml`: ACS-SW over
#      1-8 scheduler threads on workloads outside every other experiment,
#      the independent check of host.queue_call_ns and
#      queue_call_per_thread_ns (fitted on acsgap-gpu) -> heldout21-acs/
#   2. `gpusched paper acs run configs/experiments/acsgap-gpu.yaml`: the
#      fit's own experiment on this lease, its scheduler threads' queue-call
#      timers -> acsgap/
# About 2 minutes.
#
# Build (here): mkdir -p .gpu/ho21 && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/ho21/gpusched ./cmd/gpusched \
#   && git log -1 --format='%H %s' > .gpu/ho21/BUILD && xz -9 -f .gpu/ho21/gpusched
# There, from the repository root, carrying .gpu/ho21:
#   OUT=$OUT bash scripts/gpu/heldout21acs.sh
# Dry run on the simulator: OUT=/tmp/x DEVICE=h200 BIN=/tmp/gpusched bash scripts/gpu/heldout21acs.sh
set -uo pipefail

TAG=ho21
. scripts/gpu/lease.sh
for exp in heldout21-acs-gpu acsgap-gpu; do
  sed "s|^devices: \[cuda\]|devices: [${DEVICE:-cuda}]|" "configs/experiments/$exp.yaml" > "$W/$exp.yaml"
done
t0=$(date +%s)
timeout 300 "$BIN" run "$W/heldout21-acs-gpu.yaml" -o "$W/heldout21-acs" > "$W/heldout21-acs.log" 2>&1
echo "heldout21-acs rc=$? in $(($(date +%s) - t0)) s" >> "$W/rc.txt"
t0=$(date +%s)
timeout 120 "$BIN" paper acs run "$W/acsgap-gpu.yaml" -o "$W/acsgap" > "$W/acsgap.log" 2>&1
echo "acsgap rc=$? in $(($(date +%s) - t0)) s" >> "$W/rc.txt"
rm -f "$W"/*/*.svg "$W"/*/*.pdf
tar czf "$OUT/heldout21acs-$gpu.tgz" -C "$W" .
cat "$W/rc.txt" "$W/device.txt"
