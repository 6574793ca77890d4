#!/usr/bin/env bash
# Host costs of many streams and of graphs built per step, for the
# simulator's fidelity on round-robin and graph-per-step (issue #18 item 3),
# in one tarball under $OUT. One `gpusched calibrate` run of four sections:
#   - "chains interleaved over streams": the synthetic DAGs' kernel
#     (synth_node, 64 x 128 threads, 1,024 iterations) in chains of 10 and
#     50 issued round-robin over 1, 2, 4 and 8 streams with a record and a
#     wait per kernel: the host's time per kernel (each call's share), the
#     chain's period free-running and behind a gate (the GPU's own gap per
#     cross-stream edge) -> host.stream_switch_ns,
#     front_end.event_wait_doubling_ns;
#   - "graph builds over streams": graph-per-step's capture, instantiate,
#     first launch of the fresh exec, relaunch and destroy of chains of 40
#     and 200 kernels (synth_node on 1 and 8 streams, spin and empty
#     kernels on one) -> host.first_graph_launch_per_node_ns,
#     host.instantiate_per_arg_ns, host.destroy_exec_per_node_ns;
#   - "cross-stream dependencies" and "captured chains over streams" again
#     (session 4's, for the same GPU session's comparison);
# then `gpusched run configs/experiments/hostcost-dags-gpu.yaml`: the
# campaign's chain, wide and tiny DAGs under serial, rr2/4/8, graph per
# step, Taskflow and KeSCo, the rows those costs move, in the same session.
#
# Run from the repository root, with the binary built by:
#   go build -tags cuda -ldflags='-s -w' -o .gpu/hostcost/gpusched ./cmd/gpusched && gzip -f .gpu/hostcost/gpusched
#   OUT=/some/dir bash scripts/gpu/hostcost.sh
# Dry run on the simulator (same binary, any simulator config):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/hostcost.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/hostcost/gpusched,
# unpacked from BIN.gz when that is there), CAL_TIMEOUT (seconds, default
# 45), ROUNDS (calibrate runs, default 2: the second's spread beside the
# first's), RUN_TIMEOUT (seconds, default 60).
# Back here: docs/results/calibration-h100.md ("Host costs of many streams
# and of graphs built per step") has the refit commands.
set -uo pipefail

: "${OUT:?set OUT to the directory the tarball goes to}"
DEVICE=${DEVICE:-cuda}
BIN=${BIN:-.gpu/hostcost/gpusched}
CAL_TIMEOUT=${CAL_TIMEOUT:-45}
ROUNDS=${ROUNDS:-2}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
start=$(date +%s)

. scripts/gpu/device-tag.sh
binary_ready hostcost || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Which device: the output files are named by it.
device_tag "$work/device.txt"

rc=0
for i in $(seq 1 "$ROUNDS"); do
    timed_step "calibrate run $i" timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" \
        --only "chains interleaved over streams" --only "graph builds over streams" \
        --only "cross-stream dependencies" --only "captured chains over streams" \
        --raw "$work/$tag-hostcost-$i.json" --report "$work/$tag-hostcost-$i.md" 2>"$work/calibrate-$i.log"
done
# The rows, on this device (cuda unless testing).
t0=$(date +%s)
sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" configs/experiments/hostcost-dags-gpu.yaml >"$work/hostcost-dags-gpu.yaml"
timeout "$RUN_TIMEOUT" "$BIN" run "$work/hostcost-dags-gpu.yaml" -o "$work/dags" >"$work/run.log" 2>&1
run_rc=$?
[ "$run_rc" = 0 ] || rc=$run_rc
rm -f "$work/dags/"*.svg "$work/dags/"*.pdf
echo "run: exit $run_rc in $(($(date +%s) - t0))s" >>"$work/device.txt"
script_pack hostcost

# Summary, last.
echo "== hostcost on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^calibrate run\|^run:\|^total' "$work/device.txt"
grep -h 'interleaved host cost\|interleaved chain\|cross-stream device gap\|doubling\|moving to another\|graph build: \(instantiate\|first launch\|relaunch\|exec destroy\) per node, synth\|first graph launch\|exec destroy per node\|per kernel argument' "$work/calibrate-1.log"
tail -3 "$work/calibrate-$ROUNDS.log"
grep -A25 '^workload' "$work/run.log" | cut -c1-90
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
