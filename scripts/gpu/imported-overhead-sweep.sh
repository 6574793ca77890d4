#!/bin/bash
# Replays the graph-replay traces of the imported PyTorch models (issue #19,
# configs/experiments/imported-graph-gpu.yaml: serial and serial+graph) at
# several overhead_ns values, to see how far taking more of each kernel's
# recorded duration off the replay's spin closes the difference to
# PyTorch's graph replay (docs/results/imported.md, "Where the difference
# goes"). From the repository root, $OUT set, no Go toolchain; the binary
# of scripts/gpu/imported-replay.sh:
#
#   go build -tags cuda -ldflags='-s -w' -o .gpu/imp/gpusched ./cmd/gpusched
#
# usage: bash scripts/gpu/imported-overhead-sweep.sh [DEVICE] NS...
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run.
#   Each run takes about 5 s on an H100; results land in $OUT/imp-sweep.tgz
#   (imp-sweep/imported-graph-oNS/results.json and a log per value).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/imp}
DEV=cuda
if [ $# -gt 0 ] && ! [[ $1 =~ ^[0-9]+$ ]]; then
	DEV=$1
	shift
fi
[ $# -gt 0 ] || { echo "usage: $0 [DEVICE] NS..." >&2; exit 2; }
R=$OUT/imp-sweep
mkdir -p "$R"
for o in "$@"; do
	name=imported-graph-o$o
	cfg=configs/experiments/$name-run.yaml
	sed -e "s/overhead_ns: [0-9]*/overhead_ns: $o/" -e "s/^devices: .*/devices: [$DEV]/" -e "s/^name: .*/name: $name/" \
		configs/experiments/imported-graph-gpu.yaml > "$cfg"
	echo "== $name on $DEV ($(date -u +%T))"
	timeout 60 "$B/gpusched" paper imported run "$cfg" -o "$R/$name" > "$R/$name.log" 2>&1
	echo "rc=$?" | tee -a "$R/$name.log"
	rm -f "$cfg"
	grep 'serial+graph' "$R/$name.log" | head -10
done
find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf "$OUT/imp-sweep.tgz" -C "$OUT" imp-sweep && rm -rf "$R"
