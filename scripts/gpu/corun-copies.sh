#!/usr/bin/env bash
# What co-running KeSCo kernels cost each other on the device (issue #18,
# session 12, corun's second part): configs/experiments/corun-copies-gpu.yaml
# (1-10 copies of one 16-block kernel at once, captured, and a 16-task mix),
# ROUNDS times, with nvidia-smi's SM clock and power every 100 ms
# (clocks.csv), in one tarball under $OUT.
#
# Run from the repository root, with the binary built by:
#   mkdir -p .gpu/corun && go build -tags cuda -ldflags='-s -w' -o .gpu/corun/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/corun/BUILD; xz -9 -f .gpu/corun/gpusched
#   OUT=/some/dir bash scripts/gpu/corun-copies.sh
# (the binary of scripts/gpu/corun.sh serves.) Dry run on the simulator:
#   OUT=/tmp/x DEVICE=h100 BIN=/tmp/gpusched bash scripts/gpu/corun-copies.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/corun/gpusched),
# RUN_TIMEOUT (seconds per run, default 100), ROUNDS (default 1; 2 if the call has room).
set -uo pipefail

BIN=${BIN:-.gpu/corun/gpusched}
RUN_TIMEOUT=${RUN_TIMEOUT:-100}
ROUNDS=${ROUNDS:-1}
. scripts/gpu/device-tag.sh
script_start corun-copies

# The SM clock and power while the rows run (100 ms samples): whether the
# slowdown of co-running copies follows the clock (power) rather than memory.
smi_pid=
if [ "$DEVICE" = cuda ] && command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu \
        --format=csv -lms 100 >"$work/clocks.csv" 2>&1 &
    smi_pid=$!
fi
rc=0
sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" configs/experiments/corun-copies-gpu.yaml >"$work/corun-copies-gpu.yaml"
for i in $(seq 1 "$ROUNDS"); do
    timed_step "run copies-$i" timeout "$RUN_TIMEOUT" "$BIN" run "$work/corun-copies-gpu.yaml" -o "$work/copies-$i" >"$work/copies-$i.log" 2>&1
done
[ -n "$smi_pid" ] && kill "$smi_pid" 2>/dev/null
script_pack corun-copies

echo "== corun-copies on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^run \|^total' "$work/device.txt"
grep -A20 '^workload' "$work/copies-1.log" | grep -v '^$' | cut -c1-80
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
