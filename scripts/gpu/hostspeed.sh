#!/usr/bin/env bash
# The host's speed beside host-bound rows (issue #18, session 9): ACS's
# rl-physics rows are launch-bound, and the same serial rows measured on
# five H100 leases differ by up to 24% (ant serial 6,220-7,706 us) while
# device-bound rows agree within 3%. This reruns acs-gpu-confirm (13
# workloads x 14 schedulers, 1 warm-up + 10 interleaved rounds; the
# session-4 rerun took 87 s) with a binary that times calibrate's launch
# API cost before the first row and after the last (results.json:
# provenance[0].host), after one `gpusched calibrate` of the host API costs
# and the host thread hand-off on the same host (every per-call cost, not
# only the launch: which of them move with the host's speed).
#
# Build here (one binary: the carry limit):
#   go build -tags cuda -ldflags='-s -w' -o .gpu/hostspeed/gpusched ./cmd/gpusched
#   git log -1 --format='%H %s' > .gpu/hostspeed/BUILD; xz -9 -f .gpu/hostspeed/gpusched
# There (no Go), from the repository root, carrying .gpu/hostspeed:
#   OUT=$OUT bash scripts/gpu/hostspeed.sh
# Dry run on the simulator (same binary; the simulator rows run no probe):
#   OUT=/tmp/x DEVICE=h100 bash scripts/gpu/hostspeed.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/hostspeed/gpusched,
# unpacked from BIN.xz with python3's lzma when that is there), CAL_TIMEOUT
# (default 60 s), RUN_TIMEOUT (default 300 s), CONFIG (default
# configs/experiments/acs-gpu-confirm.yaml), THREADED (1: calibrate also
# the threaded paths, "launch throughput", "parked hand-offs" and "beside
# synchronizing threads", about 10-20 s more: whether ACS-SW's threaded
# rows, which differ between leases more than one thread's costs do,
# follow them; default 0, as session 9 call 7 ran).
# Comes back: $OUT/hostspeed-<gpu>.tgz: device.txt (nvidia-smi, lscpu,
# /proc/cpuinfo's model, timings), calibrate raw JSON + report, acs/
# (results.json, results.csv, results.md, run.log, stderr.log).
# Back here: acs/results.json becomes docs/results/acs-gpu-confirm-r3.json,
# the tarball docs/results/raw/; validate it with and without
# --host-speed (docs/results/calibration-h100.md, "The host's speed").
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-60}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
CONFIG=${CONFIG:-configs/experiments/acs-gpu-confirm.yaml}

. scripts/gpu/device-tag.sh
script_start hostspeed --host-record

rc=0
threaded=()
if [ "${THREADED:-0}" = 1 ]; then
    threaded=(--only "launch throughput" --only "parked hand-offs" --only "beside synchronizing threads")
fi
timed_step "calibrate" timeout "$CAL_TIMEOUT" "$BIN" calibrate --device "$DEVICE" \
    --only "host API costs" --only "launch latency, back-to-back gap, wake-up" --only "host callbacks" --only "host thread hand-off" \
    "${threaded[@]}" \
    --raw "$work/$tag-hostapi.json" --report "$work/$tag-hostapi.md" 2>"$work/calibrate.log"

paper_run acs "$CONFIG" "$RUN_TIMEOUT" "$work" || rc=$?
script_pack hostspeed

# Summary, last.
echo "== hostspeed on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^cpu:\|^calibrate:\|^paper acs run:\|^total' "$work/device.txt"
grep -h 'launch API cost\|event record cost\|stream wait cost\|synchronize call\|hand-off\|throughput\|parked\|park' "$work/calibrate.log" | head -24
python3 - "$work/acs/results.json" <<'EOF' || true
import json, sys
d = json.load(open(sys.argv[1]))
print("host:", json.dumps(d["provenance"][0].get("host", {}).get("cpu")),
      {k: round(v["ns"]) for k, v in d["provenance"][0].get("host", {}).items() if k.startswith("launch_")})
for r in d["rows"]:
    if r["scheduler"] in ("serial", "acs-sw-inflight4-k8-batched"):
        ms = sorted(r["makespans_ns"])
        print(f'{r["workload"]:16s} {r["scheduler"]:28s} {ms[len(ms)//2]/1e3:9.1f} us')
EOF
tail -3 "$work/acs-stderr.log"
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
