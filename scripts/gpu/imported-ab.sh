#!/bin/bash
# The third and fourth replay kernels on ONE GPU, interleaved (issue #19):
# session 5's run of the fourth kernel replayed the batch-8 CNNs slower
# than session 4's run of the third, on another machine whose probe put
# the third kernel's own graph-chain costs 100-190 ns a kernel higher;
# this separates the kernel from the machine. From the repository root,
# with $OUT set and no Go toolchain: ROUNDS times, the graph-replay traces
# (serial, serial+graph; 1 warm-up + 5 interleaved rounds each) with the
# third kernel (the binary of main 49788a9, configs/experiments/
# imported-graph-v3-gpu.yaml at its committed 160/1151) and then with the
# fourth (today's binary, imported-graph-v4-gpu.yaml at session 5's probe
# values 160/863), then the eager imports once each (imported-v3-gpu.yaml
# at 384/1503, imported-v4-gpu.yaml at 416/1119). Everything lands in
# $OUT/import-ab.tgz (about 2 minutes on an H100; at most 5: the limits).
# Binaries, built here (gzipped; the script unpacks them):
#
#   git worktree add /tmp/old49 49788a9 && (cd /tmp/old49 && go build -tags cuda -ldflags='-s -w' -o .../.gpu/import-ab/gpusched-v3 ./cmd/gpusched)
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import-ab/gpusched ./cmd/gpusched   # main >= 4224d74
#   gzip -f .gpu/import-ab/gpusched .gpu/import-ab/gpusched-v3
#
# usage: [ROUNDS=2] bash scripts/gpu/imported-ab.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run.
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import-ab}
DEV=${1:-cuda}
R=$OUT/import-ab
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack
[ -x "$B/gpusched-v3" ] || { echo "missing $B/gpusched-v3" >&2; exit 1; }
imported_build_txt
[ "$DEV" = cuda ] && imported_device_txt
for r in $(seq 1 "${ROUNDS:-2}"); do
	imported_ab_run "graph-v3-r$r" "$B/gpusched-v3" configs/experiments/imported-graph-v3-gpu.yaml "160 1151" 30
	imported_ab_run "graph-v4-r$r" "$B/gpusched" configs/experiments/imported-graph-v4-gpu.yaml "160 863" 30
done
imported_ab_run eager-v3 "$B/gpusched-v3" configs/experiments/imported-v3-gpu.yaml "384 1503" 100
imported_ab_run eager-v4 "$B/gpusched" configs/experiments/imported-v4-gpu.yaml "416 1119" 100
log done
find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf "$OUT/import-ab.tgz" -C "$OUT" import-ab && rm -rf "$R"
