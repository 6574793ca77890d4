#!/bin/bash
# Issue #19's independent check: PyTorch models the importer and the replay
# kernel were NOT developed on, captured, imported and replayed on the GPU in
# one call, from the repository root, with $OUT set and no Go toolchain:
#
#   1. scripts/gpu/capture_pytorch.py on $MODELS at batch 1 and 8: PyTorch's
#      eager and CUDA-graph replay times, Kineto traces with execution traces
#      and graph-replay traces;
#   2. every trace imported with this binary (`gpusched import kineto`, with
#      the execution trace where there is one);
#   3. the eager imports under serial, serial+graph and the multi-stream
#      strategies, the graph-replay imports under serial and serial+graph
#      (`gpusched paper imported run`), at the replay kernel's overhead_ns
#      and floor_ns given in $EAGER and $GRAPH ("OVERHEAD FLOOR", measured by
#      the replay probe on the same kind of GPU) and profiler_ns $PROFILER.
#
# The imports go to configs/workloads/pytorch-heldout/ (gzipped) and the
# experiment files to configs/experiments/imported{,-graph}-heldout-gpu.yaml
# of the host's copy, where they are committed afterwards, so that the
# results name repository paths (`gpusched validate` reruns them on the
# simulator). Everything lands in $OUT/heldout.tgz: capture-summary.json,
# the traces, those files (w/), the results folders and logs.
#
# usage: EAGER="384 1503" GRAPH="160 1151" bash scripts/gpu/imported-heldout.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run that
#   replaces step 1 by two committed traces (resnet18-b1, bert-base-b1).
#   B: the folder of the carried binaries (default .gpu/import; gpusched,
#   gzipped or not).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
: "${EAGER:?set EAGER to the eager imports' \"overhead_ns floor_ns\"}"
: "${GRAPH:?set GRAPH to the graph-replay imports' \"overhead_ns floor_ns\"}"
B=${B:-.gpu/import}
DEV=${1:-cuda}
MODELS=${MODELS:-mobilenet_v2,efficientnet_b0,resnet50,squeezenet1_1,gpt2}
PROFILER=${PROFILER:-818}
R=$OUT/heldout
W=configs/workloads/pytorch-heldout
X=configs/experiments
mkdir -p "$R/w" "$R/traces" "$W"
. scripts/gpu/imported-lib.sh
imported_unpack
imported_build_txt

log "capture ($MODELS)"
if [ "$DEV" = cuda ]; then
	imported_device_txt
	timeout 200 python3 scripts/gpu/capture_pytorch.py --models "$MODELS" --batches 1,8 --budget 150 --out "$R" > "$R/capture.log" 2>&1
	echo "rc=$?" | tee -a "$R/capture.log"
	tail -14 "$R/capture.log"
	tar xzf "$R/capture.tar.gz" -C "$R/traces" --strip-components 1 && rm "$R/capture.tar.gz"
else
	for m in resnet18-b1 bert-base-b1; do
		cp workloads/kineto/testdata/pytorch/$m.*.gz "$R/traces/"
	done
fi

log import
eager=""
graph=""
entry() { echo "  - {name: $1, family: file, params: {path: ../workloads/pytorch-heldout/$1.yaml.gz, overhead_ns: $2, floor_ns: $3, profiler_ns: $PROFILER}}"; }
for t in "$R"/traces/*.trace.json.gz; do
	m=$(basename "$t" .trace.json.gz)
	args=()
	[ -f "$R/traces/$m.et.json.gz" ] && args=(--et "$R/traces/$m.et.json.gz")
	if ! timeout 60 "$B/gpusched" import kineto "$t" "${args[@]}" --name "$m" -o "$W/$m.yaml" >> "$R/import.log" 2>&1; then
		echo "$m: import FAILED" | tee -a "$R/import.log"
		continue
	fi
	gzip -nf "$W/$m.yaml" && cp "$W/$m.yaml.gz" "$R/w/"
	case $m in
	*.graph) graph="$graph$(entry "$m" $GRAPH)"$'\n' ;;
	*) eager="$eager$(entry "$m" $EAGER)"$'\n' ;;
	esac
done
grep -c . "$R/import.log" > /dev/null && tail -5 "$R/import.log"

# experiment NAME DESCRIPTION WORKLOADS SCHEDULERS: $X/NAME-gpu.yaml, and
# a copy in w/.
experiment() {
	printf "name: %s\ndescription: %s\nseed: 1\nrepetitions: 5\nbaseline: serial+graph\nworkloads:\n%sschedulers:\n%sdevices: [%s]\n" \
		"$1" "$2" "$3" "$4" "$DEV" > "$X/$1-gpu.yaml"
	cp "$X/$1-gpu.yaml" "$R/w/"
}
base="  - {name: serial, kind: serial}
  - {name: serial+graph, kind: serial-graph, params: {graph: true}}
"
experiment imported-heldout "held-out PyTorch models (eager traces with execution traces), not in the repository when the importer was built" "$eager" "$base  - {name: round-robin, kind: round-robin, params: {k: 4}}
  - {name: taskflow, kind: taskflow}
  - {name: taskflow+graph, kind: taskflow, params: {graph: true}}
  - {name: nimble, kind: nimble}
  - {name: nimble+graph, kind: nimble, params: {graph: true}}
  - {name: kesco, kind: kesco}
  - {name: kesco+graph, kind: kesco, params: {graph: true}}
  - {name: autograph, kind: autograph}
  - {name: acs-sw, kind: acs-sw}
"
experiment imported-graph-heldout "held-out PyTorch models (graph-replay traces)" "$graph" "$base"

for run in imported-heldout:150 imported-graph-heldout:40; do
	name=${run%:*}
	log "$name on $DEV"
	timeout "${run#*:}" "$B/gpusched" paper imported run "$X/$name-gpu.yaml" -o "$R/$name" > "$R/$name.log" 2>&1
	echo "rc=$?" | tee -a "$R/$name.log"
	grep -E "serial\+graph|^\S+ +serial " "$R/$name.log" | head -24
done
log done
find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf "$OUT/heldout.tgz" -C "$OUT" heldout && rm -rf "$R"
