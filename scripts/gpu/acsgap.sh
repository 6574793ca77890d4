#!/usr/bin/env bash
# Where ACS-SW's host time goes, call by call (issue #18, session 17). The
# simulator predicts every ACS-SW variant 20-30% faster than the GPU (serial
# and the other multi-stream schedulers of the same random DAGs: within a
# few percent). The scheduler's thread statistics say every part of its
# round trip is a little longer on the GPU; this names which mechanism, in
# one tarball under $OUT:
#   1. `gpusched paper acs run configs/experiments/acsgap-gpu.yaml` (ACS-SW
#      with call_stats: each scheduler-thread launch by how many other
#      scheduler threads were launching or synchronizing when it began; the
#      window thread's check, Puts, retiring, graph dispatch) -> acs/
#   2. `gpusched trace` of six rows (serial, acs-sw, graph-N1 and graph-N16
#      of a random DAG; serial and acs-sw of ant): the traced run records an
#      event pair around every command, so its host times are perturbed
#      (session 9: 1.5-6x), but its device spans give each kernel's
#      duration when kernels overlap against serial's -> traces/*.json.gz
# About 15-25 s for 1 and 10-20 s for 2.
#
# Build (here): mkdir -p .gpu/acsgap && go build -tags cuda -ldflags='-s -w' -o .gpu/acsgap/gpusched ./cmd/gpusched \
#   && git log -1 --format='%H %s' > .gpu/acsgap/BUILD && xz -9 -f .gpu/acsgap/gpusched
# There (no Go), from the repository root, carrying .gpu/acsgap:
#   OUT=$OUT bash scripts/gpu/acsgap.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/acsgap.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/acsgap/gpusched),
# RUN_TIMEOUT (default 60 s), TRACE_TIMEOUT (default 20 s a trace). Back
# here: `gpusched validate acs/results.json -o DIR` gives the simulator's
# figures of the same rows.
set -uo pipefail

RUN_TIMEOUT=${RUN_TIMEOUT:-60}
TRACE_TIMEOUT=${TRACE_TIMEOUT:-20}
EXP=configs/experiments/acsgap-gpu.yaml

. scripts/gpu/device-tag.sh
script_start acsgap --host-record

rc=0
paper_run acs "$EXP" "$RUN_TIMEOUT" "$work" || rc=$?
mkdir -p "$work/traces"
exp=$(experiment_on_device "$EXP")
for row in draw0:serial draw0:acs-sw draw0:acs-sw-graph-N1 draw0:acs-sw-graph-N16 ant-256-g32:serial ant-256-g32:acs-sw; do
    wl=${row%%:*} sc=${row#*:}
    timed_step "trace $wl $sc" timeout "$TRACE_TIMEOUT" "$BIN" trace "$exp" --workload "$wl" --scheduler "$sc" \
        --device "$DEVICE" -o "$work/traces/$wl-$sc.json" >>"$work/traces/trace.log" 2>&1
    gzip -f "$work/traces/$wl-$sc.json" 2>/dev/null
done
script_pack acsgap

# Summary, last.
echo "== acsgap on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep '^paper\|^trace\|^total' "$work/device.txt"
acs_thread_table "$work/acs/results.json"
python3 - "$work/acs/results.json" <<'PY' || true
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    st = r.get("scheduler_stats") or {}
    parts = {k: v for k, v in st.items() if k.startswith("window_") and k.endswith("_ns_per_op")}
    lau = [(k.rsplit("_", 2)[-2][0] + k.rsplit("_", 1)[-1], v) for k, v in st.items() if k.startswith("thread_launch_ns_others_")]
    if parts:
        print(f'{r["workload"][:12]:12s} {r["scheduler"][:28]:28s} ' + " ".join(f'{k[7:-10]}={v:.0f}' for k, v in sorted(parts.items()))
              + "  launch " + " ".join(f"{k}={v:.0f}" for k, v in sorted(lau)))
PY
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
