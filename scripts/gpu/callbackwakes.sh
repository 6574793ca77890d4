#!/usr/bin/env bash
# Callback wakes by idle time on another lease, and ACS-SW's rows beside
# the host probe (issue #18, session 34). Session 30's SET-batch timelines
# (raw/callbackthread-h200.txz) show the driver's callback thread waking
# in 15-36 us on average after under 60 us idle but 68-83 us after 60-160
# us (medians 46-61: a mix of quick and 150-850 us wakes), where the
# simulator charges 31 us below its 160 us park; scripts/callback-wakes.py
# reads that from any timeline. This call asks whether another lease shows
# the same, and adds a lease of ACS-SW rows with a host probe (gpusched run
# times the launch cost before and after), the out-of-sample check of
# scaling the simulator's host costs by it. One tarball under $OUT:
#  1. configs/experiments/set-batch-concurrency-gpu.yaml plain, then with
#     --timelines;
#  2. configs/experiments/heldout21-acs-gpu.yaml.
#
# Build here:
#   mkdir -p .gpu/cw && go build -tags cuda -trimpath -ldflags='-s -w' -o .gpu/cw/gpusched ./cmd/gpusched \
#     && git log -1 --format='%H %s' > .gpu/cw/BUILD && xz -9 -f .gpu/cw/gpusched
# There, from the repository root, carrying .gpu/cw:
#   OUT=$OUT bash scripts/gpu/callbackwakes.sh
set -uo pipefail

RUN_TIMEOUT=${RUN_TIMEOUT:-200}
TAG=cw
. scripts/gpu/lease.sh
SBC=configs/experiments/set-batch-concurrency-gpu.yaml
for run in plain tl; do
  flags=""; [ "$run" = tl ] && flags=--timelines
  t0=$(date +%s)
  timeout "$RUN_TIMEOUT" "$BIN" run "$SBC" -o "$W/$run" $flags > "$W/$run.stdout" 2> "$W/$run.stderr"
  echo "$run rc=$? in $(($(date +%s) - t0)) s" >> "$W/rc.txt"
done
experiment heldout21-acs configs/experiments/heldout21-acs-gpu.yaml
rm -f "$W"/*/*.svg "$W"/*/*.pdf
tar cJf "$OUT/callbackwakes-$gpu.txz" -C "$W" .
cat "$W/rc.txt"
