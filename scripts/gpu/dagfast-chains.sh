#!/usr/bin/env bash
# The per-run cost of a timed run (issue #18, session 15; docs/results/raw/
# dagfast-h100.tgz showed the first kernel of every traced random-DAG run
# 8-17 us longer than its twin later in the run). One lease:
#  1. `gpusched calibrate --only "host API costs" --only "launch latency,
#     back-to-back gap, wake-up" --only copies --only "device idle wake"`:
#     this lease's launch cost, latency, wake-up and copy rates, which the
#     simulated rows are read with, and a launch and synchronize of a 5 us
#     kernel after the GPU idled 0 to 3,200 us (calibrate/idlewake.go: how
#     long an idle makes a launch pay more, and how much).
#  2. `gpusched run configs/experiments/dagfast-chains-gpu.yaml`: serial
#     chains of 1-16 identical synth_node kernels at 2,048 and 256
#     iterations (the intercept over the chain length is the per-run cost),
#     and one large launch with and without a download, 20 repetitions.
#  3. `gpusched trace` of chain8 and big1-download (events around each
#     command): the first kernel against its twins.
#
# Build here (one binary):
#   mkdir -p .gpu/dagfast && go build -tags cuda -ldflags='-s -w' -o .gpu/dagfast/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/dagfast/BUILD; xz -9 -f .gpu/dagfast/gpusched
# There (no Go), from the repository root, carrying .gpu/dagfast:
#   OUT=$OUT bash scripts/gpu/dagfast-chains.sh
# Dry run on the simulator (same binary):
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/dagfast-chains.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/dagfast/gpusched),
# CAL_TIMEOUT (default 30 s), RUN_TIMEOUT (default 60 s), TRACE_TIMEOUT
# (per trace, default 15 s).
# Comes back: $OUT/dagfast-chains-<gpu>.tgz: device.txt, <gpu>-host.json /
# .md, chains/ (results), traces/*.json.gz, logs.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-30}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
TRACE_TIMEOUT=${TRACE_TIMEOUT:-15}
CONFIG=configs/experiments/dagfast-chains-gpu.yaml

BIN=${BIN:-.gpu/dagfast/gpusched}
. scripts/gpu/device-tag.sh
script_start dagfast-chains --host-record

rc=0
calibrate_step "calibrate" host "host API costs" "launch latency, back-to-back gap, wake-up" copies \
    "device idle wake"

config="$work/$(basename "$CONFIG")"
sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" "$CONFIG" >"$config"
timed_step "run" timeout "$RUN_TIMEOUT" "$BIN" run "$config" -o "$work/chains" -j 1 \
    >"$work/run.log" 2>"$work/run-stderr.log"
rm -f "$work/chains/"*.svg "$work/chains/"*.pdf

mkdir -p "$work/traces"
for w in chain8 big1-download; do
    f="$work/traces/$w.json"
    timed_step "trace $w" timeout "$TRACE_TIMEOUT" "$BIN" trace "$config" --device "$DEVICE" \
        --workload "$w" --scheduler serial -o "$f" >>"$work/trace.log" 2>&1
    gzip -f "$f" 2>/dev/null
done

script_pack dagfast-chains

# Summary, last.
echo "== dagfast-chains on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate:\|^run:\|^trace \|^total' "$work/device.txt"
grep -h 'launch API cost\|launch latency\|wake-up\|device-to-host\|idle' "$work/calibrate.log" | head -20
grep ' serial ' "$work/run.log"
grep 'makespan' "$work/trace.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
