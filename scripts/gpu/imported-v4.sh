#!/bin/bash
# The imported PyTorch models (issue #19) replayed on the GPU with the
# replay kernel's fourth version, from the repository root, with $OUT set
# and no Go toolchain, in one call:
#
#   1. workloads/file's GPU tests (cuda tag), once: TestGPUReplay (the
#      fourth kernel's outputs against the CPU reference) and
#      TestGPUReplayProbe (its floor and overhead per shape, beside
#      replay_v3's and replay_bare's);
#   2. configs/experiments/imported-v4-gpu.yaml (every eager import under
#      serial, serial+graph and the multi-stream strategies),
#      imported-graph-v4-gpu.yaml (the graph-replay traces, serial and
#      serial+graph) and imported-graph-v4-gpu-o0.yaml (the same at
#      overhead_ns 0). The simulator's rows of the same experiments
#      (imported-v4-sim.yaml, imported-graph-v4-sim.yaml,
#      imported-graph-v4-sim-o0.yaml) were committed before this ran.
#
# Everything lands in $OUT/import-v4.tgz (about 50 s on an H100; at most
# 225 s: the timeouts).
# Binaries, built here (gzipped; the script unpacks them):
#
#   mkdir -p .gpu/import
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import/gpusched ./cmd/gpusched
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/import/file.test ./workloads/file
#   gzip -f .gpu/import/gpusched .gpu/import/file.test; git log -1 --format='%H %s' > .gpu/import/commit.txt
#
# With FROM_PROBE=1 (the intended run) the experiments run at the values
# step 1 measures (eager imports: its "measured:" line, 4 ranges;
# graph-replay traces: its "replay signature:" line), written into copies
# of the configs with sed; without it, at the configs' estimates.
#
# usage: [FROM_PROBE=1] bash scripts/gpu/imported-v4.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   step 2 (step 1 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import}
DEV=${1:-cuda}
R=$OUT/import-v4
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack
imported_build_txt
if [ "$DEV" = cuda ]; then
	[ -x "$B/file.test" ] || { echo "missing $B/file.test" >&2; exit 1; }
	imported_device_txt
	imported_replay_tests 45
	grep -E 'shape|ranges grid|sig grid|per range|signature:|measured|--- |rc=' "$R/replay-test.log"
fi
# probe_values LINE: "overhead_ns=O floor_ns=F" from the probe's line.
probe_values() { grep -o "$1 overhead_ns=[0-9]* floor_ns=[0-9]*" "$R/replay-test.log" 2>/dev/null | tail -1 | sed "s/^$1 //"; }
# At most 180 s in all: the eager imports (11 schedulers) take the most.
for run in imported-v4:120 imported-graph-v4:30 imported-graph-v4-o0:30; do
	name=${run%:*}
	cfg=configs/experiments/${name%-o0}-gpu${name##*-v4}.yaml
	log "$name ($cfg) on $DEV"
	run_cfg=$cfg
	if [ "$DEV" != cuda ] || [ -n "${FROM_PROBE:-}" ]; then
		# a dry run on the simulator, or the probe's values: a copy
		run_cfg=${cfg%.yaml}-run.yaml
		sed -E "s/^devices: .*/devices: [$DEV]/" "$cfg" > "$run_cfg"
		line="measured:"
		case $name in imported-graph*) line="replay signature:" ;; esac
		v=$(probe_values "$line")
		if [ -n "${FROM_PROBE:-}" ] && [ -n "$v" ]; then
			o=${v%% *}; o=${o#overhead_ns=}; f=${v##*floor_ns=}
			case $name in *-o0) o=0 ;; esac
			sed -i -E "s/overhead_ns: [0-9]+, floor_ns: [0-9]+/overhead_ns: $o, floor_ns: $f/" "$run_cfg"
			echo "$name: overhead_ns $o, floor_ns $f from the probe ($line)" | tee -a "$R/from-probe.txt"
		fi
		cp "$run_cfg" "$R/"
	fi
	timeout "${run#*:}" "$B/gpusched" paper imported run "$run_cfg" -o "$R/$name" > "$R/$name.log" 2>&1
	echo "rc=$?" | tee -a "$R/$name.log"
	[ "$run_cfg" = "$cfg" ] || rm -f "$run_cfg"
	grep -E "serial\+graph|^\S+ +serial " "$R/$name.log" | head -24
done
log done
find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf "$OUT/import-v4.tgz" -C "$OUT" import-v4 && rm -rf "$R"
