#!/usr/bin/env bash
# Host thread wake-ups after idle times past their spin (issue #18 item 3,
# ACS-SW's and SET's threaded variants), in one tarball under $OUT:
# `gpusched calibrate --only "parked hand-offs"`: a Queue Put to a thread
# idle in Get for 20 us to 1 ms (host.park_after_ns, host.parked_wake_ns),
# a host callback's Put behind spin kernels of 20 us to 1 ms (reported),
# and StreamSynchronize / EventSynchronize returning after 20 us to 10 ms
# kernels (host.sync_park_after_ns, host.sync_parked_wake_ns); and
# `--only "beside synchronizing threads"`: one thread's launch, a queue
# ping-pong and a launch + synchronize of 20 us while 0, 1, 3 and 7 other
# threads loop on 2 ms kernels and StreamSynchronize (reported). About 2 s
# of GPU work after the context is up.
#
# Run from the repository root, with the binary built here:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/fidelity/gpusched ./cmd/gpusched && gzip -f .gpu/fidelity/gpusched
#   OUT=/some/dir bash scripts/gpu/fidelity-parked.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/fidelity-parked.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/fidelity/gpusched,
# unpacked from BIN.gz when that is there), CAL_TIMEOUT (seconds, default 60).
# Back here: docs/results/calibration-h100.md ("Parked host threads") has
# the refit commands.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}

BIN=${BIN:-.gpu/fidelity/gpusched}
. scripts/gpu/device-tag.sh
script_start fidelity-parked
lscpu >"$work/lscpu.txt" 2>&1
[ -f .gpu/fidelity/BUILD ] && cp .gpu/fidelity/BUILD "$work/BUILD"

t0=$(date +%s)
timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" --only "parked hand-offs" --only "beside synchronizing threads" \
    --raw "$work/$tag-parked.json" --report "$work/$tag-parked.md" 2>"$work/calibrate.log"
cal_rc=$?
cal_s=$(($(date +%s) - t0))

echo "calibrate: exit $cal_rc in ${cal_s}s; total $(($(date +%s) - start))s" >>"$work/device.txt"
tarball="$OUT/fidelity-parked-$tag.tgz"
mkdir -p "$OUT"
tar czf "$tarball" -C "$work" .

# Summary, last.
echo "== fidelity-parked on $tag ($DEVICE)"
head -2 "$work/device.txt"
echo "calibrate: exit $cal_rc, ${cal_s}s"
grep '^calibrate' "$work/calibrate.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$cal_rc" = 0 ]
