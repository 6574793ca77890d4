#!/bin/bash
# Replays the PyTorch models recorded by capture_pytorch.py (issue #19) on
# the GPU, from the repository root, with $OUT set and no Go toolchain:
#
#   1. the replay kernel's GPU tests (workloads/file, cuda tag): its outputs
#      against the CPU reference under serial and round-robin, and changed
#      by a schedule without the dependencies (TestGPUReplay); the global
#      timer's step, the SM clock's rate and, for the replay kernel and the
#      one it replaced (replay_v1), the cost per kernel (TestGPUReplayProbe):
#      overhead_ns (after the spin) and floor_ns (at spin 0) of the replay
#      kernel go to step 3;
#   2. every captured trace imported again with this host's binary
#      (workloads/kineto/testdata/pytorch), compared with the committed
#      workload files (configs/workloads/pytorch);
#   3. configs/experiments/imported-gpu.yaml (every model under serial,
#      serial+graph and the multi-stream strategies) and imported-graph-gpu.yaml
#      (the graph-replay traces, serial and serial+graph), with the measured
#      overhead_ns and floor_ns, on DEVICE; and imported-graph-gpu.yaml again
#      with overhead_ns 0 (how the replay's time moves with it);
#   4. scripts/gpu/imported-chain-probe.py (PyTorch): chains of 64 spin
#      kernels timed eager and as a CUDA graph, their graph replays traced,
#      imported and replayed under serial and serial+graph (imported-chain-v2).
#
# Everything lands in $OUT/imp.tgz. Binaries, built here (gzipped to keep
# the carried folder small; the script unpacks them; commit.txt names the
# build's commit):
#
#   mkdir -p .gpu/imp
#   go build -tags cuda -ldflags='-s -w' -o .gpu/imp/gpusched ./cmd/gpusched
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/imp/file.test ./workloads/file
#   gzip -9 .gpu/imp/gpusched .gpu/imp/file.test; git rev-parse HEAD > .gpu/imp/commit.txt
#
# usage: bash scripts/gpu/imported-replay.sh [DEVICE] [SECONDS]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of the
#   same steps, which uses $OVERHEAD_NS and $FLOOR_NS (default 0) instead of
#   step 1.
#   SECONDS: the budget for step 3's experiments (default 420; about 40 s on
#   an H100).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/imp}
DEV=${1:-cuda}
BUDGET=${2:-420}
R=$OUT/imp
mkdir -p "$R/w"
. scripts/gpu/imported-lib.sh
imported_unpack
if [ "$DEV" = cuda ] && [ ! -x "$B/file.test" ]; then
	echo "missing $B/file.test" >&2
	exit 1
fi
imported_build_txt

O=${OVERHEAD_NS:-0}
FL=${FLOOR_NS:-0}
if [ "$DEV" = cuda ]; then
	imported_device_txt
	imported_replay_tests 60
	grep -E 'globaltimer|replay|measured|PASS|FAIL|rc=' "$R/replay-test.log" | tail -16
	measured=$(grep -o 'measured: overhead_ns=[0-9]* floor_ns=[0-9]*' "$R/replay-test.log" | tail -1)
	if [ -n "$measured" ]; then
		O=$(echo "$measured" | sed 's/.*overhead_ns=\([0-9]*\).*/\1/')
		FL=$(echo "$measured" | sed 's/.*floor_ns=\([0-9]*\).*/\1/')
	fi
fi
echo "overhead_ns=$O floor_ns=$FL" | tee "$R/overhead.txt"

# A chain of spin kernels through the capture route (needs PyTorch; with
# CHAIN=1 on a dry run, a stand-in on PYTHONPATH): replayed at the end.
if [ "$DEV" = cuda ] || [ -n "${CHAIN:-}" ]; then
	log "chain probe"
	timeout 60 python3 scripts/gpu/imported-chain-probe.py "$R/chain" 64 > "$R/chain.log" 2>&1
	echo "rc=$?" | tee -a "$R/chain.log"
	tail -3 "$R/chain.log"
fi

log "import"
for t in workloads/kineto/testdata/pytorch/*.trace.json.gz; do
	m=$(basename "$t" .trace.json.gz)
	args=()
	if [ -f "${t%.trace.json.gz}.et.json.gz" ]; then
		args=(--et "${t%.trace.json.gz}.et.json.gz")
	fi
	if ! timeout 60 "$B/gpusched" import kineto "$t" "${args[@]}" --name "$m" -o "$R/w/$m.yaml" 2>> "$R/import.log"; then
		echo "$m: import FAILED" | tee -a "$R/import.log"
	elif cmp -s <(gzip -dc "configs/workloads/pytorch/$m.yaml.gz") "$R/w/$m.yaml"; then
		echo "$m: same as committed" >> "$R/import.log"
	else
		echo "$m: DIFFERS from the committed file" | tee -a "$R/import.log"
	fi
done

# The graph-replay traces also run with overhead_ns 0 (floor_ns as
# measured): with the measured value's rows, how the replay's time moves
# with the overhead. The experiments are named -v2, after the replay
# kernel's second version (imported.md keeps the first one's rows apart).
for run in imported:$O imported-graph:$O imported-graph:0; do
	x=${run%:*}
	o=${run#*:}
	name=$x-v2
	[ "$run" = imported-graph:0 ] && name=imported-graph-v2-o0
	[ "$run" = imported-graph:0 ] && [ "$O" = 0 ] && continue
	left=$((BUDGET - ($(date +%s) - start)))
	[ "$x" = imported ] && left=$((left * 3 / 4))
	log "$name on $DEV, overhead_ns $o ($left s)"
	cfg=configs/experiments/$name-run.yaml
	sed -E -e "s/overhead_ns: [0-9]+(, floor_ns: [0-9]+)?/overhead_ns: $o, floor_ns: $FL/" -e "s/^devices: .*/devices: [$DEV]/" -e "s/^name: .*/name: $name/" "configs/experiments/$x-gpu.yaml" > "$cfg"
	timeout "$left" "$B/gpusched" paper imported run "$cfg" -o "$R/$name" > "$R/$name.log" 2>&1
	echo "rc=$?" | tee -a "$R/$name.log"
	rm -f "$cfg"
	tail -4 "$R/$name.log"
done
# The chain's imports go where they will be committed (configs/workloads/
# pytorch, gzipped), so that the results name the repository's files.
if ls "$R"/chain/*.graph.trace.json.gz > /dev/null 2>&1; then
	log "chain replay"
	ws=""
	for t in "$R"/chain/*.graph.trace.json.gz; do
		m=$(basename "$t" .trace.json.gz)
		y=configs/workloads/pytorch/$m.yaml
		if timeout 30 "$B/gpusched" import kineto "$t" --name "$m" -o "$y" >> "$R/chain.log" 2>&1 && gzip -nf "$y"; then
			cp "$y.gz" "$R/chain/"
			ws="$ws  - {name: $m, family: file, params: {path: ../workloads/pytorch/$m.yaml.gz, overhead_ns: $O, floor_ns: $FL}}\n"
		else
			echo "$m: import FAILED" | tee -a "$R/chain.log"
		fi
	done
	cfg=configs/experiments/imported-chain-v2-run.yaml
	printf "name: imported-chain-v2\ndescription: chains of torch.cuda._sleep kernels (scripts/gpu/imported-chain-probe.py), graph-replay traces\nseed: 1\nrepetitions: 5\nbaseline: serial+graph\nworkloads:\n${ws}schedulers:\n  - {name: serial, kind: serial}\n  - {name: serial+graph, kind: serial-graph, params: {graph: true}}\ndevices: [$DEV]\n" > "$cfg"
	cp "$cfg" "$R/chain/"
	left=$((BUDGET + 10 - ($(date +%s) - start)))
	timeout "$((left > 5 ? left : 5))" "$B/gpusched" paper imported run "$cfg" -o "$R/imported-chain-v2" > "$R/imported-chain-v2.log" 2>&1
	echo "rc=$?" | tee -a "$R/imported-chain-v2.log"
	rm -f "$cfg"
	tail -4 "$R/imported-chain-v2.log"
fi
log done
rm -rf "$R/w"
find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf "$OUT/imp.tgz" -C "$OUT" imp && rm -rf "$R"
