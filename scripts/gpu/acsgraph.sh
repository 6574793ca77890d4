#!/usr/bin/env bash
# ACS-SW's dispatch graph (issue #18): a graph launch right after its nodes'
# updates. One lease:
#   1. calibrate --only "graph exec updates" (calibrate/graphupdates.go:
#      execs of N = 1-64 kernel nodes over N streams, every node, one node
#      or none updated to another grid or kernel, the arguments alone, copy
#      nodes; synchronized, behind a spin kernel, over a running launch):
#      what scripts/fit-graph-updates.py fits host.graph_launch_changed_node_ns
#      and graph_launch_kernel_change_ns on -> <gpu>-acsgraph.json / .md
#   2. `gpusched paper acs run configs/experiments/acsgraph-gpu.yaml` (every
#      ACS-SW row with call_stats: the dispatch split into node updates,
#      window_graph_update_ns_per_update, and graph launches,
#      window_graph_launch_ns_per_launch) -> acs/
# Session 18 ran the same from its lost branch (raw/acsgraph-{h100,h200}.tgz).
#
# Build (here): mkdir -p .gpu/acsgraph && go build -tags cuda -ldflags='-s -w' -o .gpu/acsgraph/gpusched ./cmd/gpusched \
#   && git log -1 --format='%H %s' > .gpu/acsgraph/BUILD && xz -9 -f .gpu/acsgraph/gpusched
# There (no Go), from the repository root, carrying .gpu/acsgraph:
#   OUT=$OUT bash scripts/gpu/acsgraph.sh
# Dry run on the simulator:
#   OUT=/tmp/x DEVICE=configs/devices/h100.yaml BIN=/tmp/gpusched bash scripts/gpu/acsgraph.sh
#
# Environment: DEVICE (default cuda), BIN (default .gpu/acsgraph/gpusched),
# CAL_TIMEOUT (default 120 s), RUN_TIMEOUT (default 120 s).
# Comes back: $OUT/acsgraph-<gpu>.tgz: device.txt, <gpu>-acsgraph.json / .md,
# calibrate.log, acsgraph-gpu.yaml, acs/ (results.json) and its logs. Then,
# here: `python3 scripts/fit-graph-updates.py <gpu>-acsgraph.json` and
# `gpusched validate acs/results.json -rows`.
set -uo pipefail

CAL_TIMEOUT=${CAL_TIMEOUT:-120}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
BIN=${BIN:-.gpu/acsgraph/gpusched}
EXP=configs/experiments/acsgraph-gpu.yaml

. scripts/gpu/device-tag.sh
script_start acsgraph --host-record

rc=0
calibrate_step calibrate acsgraph "graph exec updates"
paper_run acs "$EXP" "$RUN_TIMEOUT" "$work" || rc=$?
script_pack acsgraph

echo "== acsgraph on $tag ($DEVICE)"
head -2 "$work/device.txt"
grep -h '^paper acs run:\|^calibrate\|^total' "$work/device.txt"
grep -h 'N=\(1\|8\|64\) dnn\(\| no update\| kernel change\| arguments only\): launch\|N=64 copy: launch' "$work/calibrate.log" | sed 's/^calibrate: //'
python3 - "$work/acs/results.json" <<'PY' || true
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    s = r.get("scheduler_stats") or {}
    print(f'{r["workload"]:12s} {r["scheduler"]:22s} makespan {r["makespan_us"]["median"]:9.1f} us'
          f'  update {s.get("window_graph_update_ns_per_update", 0):7.0f} ns  launch {s.get("window_graph_launch_ns_per_launch", 0):8.0f} ns')
PY
echo "wrote $tarball ($(du -h "$tarball" | cut -f1))"
[ "$rc" = 0 ]
