#!/bin/bash
# The replay kernel's cost per kernel and per buffer range on the GPU
# (issue #19), from the repository root, with $OUT set and no Go toolchain:
#
#   1. workloads/file's GPU tests (cuda tag), three times: TestGPUReplay (the
#      replay kernel's outputs against the CPU reference under serial and
#      round-robin, changed by a schedule without the dependencies) and
#      TestGPUReplayProbe (the replay kernel and replay_v2, the one it
#      replaced: floor and overhead per kernel, alone and in a chain from
#      the host and in a CUDA graph, for a signature only and 1, 2, 3, 4 and
#      8 buffer ranges at one block, a signature and 4 ranges at a block per
#      SM);
#   2. a smoke run of every imported model (configs/experiments/imported-gpu.yaml
#      and imported-graph-gpu.yaml, serial, serial+graph and round-robin, one repetition)
#      with the replay kernel: each row's outputs against the CPU reference.
#
# Everything lands in $OUT/import-probe.tgz (about 30 s on an H100).
# Binaries, built here (gzipped; the script unpacks them):
#
#   mkdir -p .gpu/import
#   go build -tags cuda -ldflags='-s -w' -o .gpu/import/gpusched ./cmd/gpusched
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/import/file.test ./workloads/file
#   gzip -f .gpu/import/gpusched .gpu/import/file.test; git log -1 --format='%H %s' > .gpu/import/commit.txt
#
# usage: bash scripts/gpu/imported-probe.sh [DEVICE]
#   DEVICE: cuda (default), or a simulator config (h100) for a dry run of
#   step 2 (step 1 needs a GPU).
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/import}
DEV=${1:-cuda}
R=$OUT/import-probe
mkdir -p "$R"
. scripts/gpu/imported-lib.sh
imported_unpack
imported_build_txt
if [ "$DEV" = cuda ]; then
	[ -x "$B/file.test" ] || { echo "missing $B/file.test" >&2; exit 1; }
	imported_device_txt
	imported_replay_tests 60 -test.count 3
	grep -E 'shape|ranges grid|sig grid|per range|signature:|measured|globaltimer|--- |rc=' "$R/replay-test.log" | tail -40
fi
for x in imported imported-graph; do
	name=$x-smoke
	log "$name on $DEV"
	cfg=configs/experiments/$name-run.yaml
	sed -E -e "s/^repetitions: .*/repetitions: 1/" -e "s/^devices: .*/devices: [$DEV]/" -e "s/^name: .*/name: $name/" \
		-e '/^  - \{name: (taskflow|taskflow\+graph|nimble|nimble\+graph|kesco|kesco\+graph|autograph|acs-sw),/d' \
		"configs/experiments/$x-gpu.yaml" > "$cfg"
	timeout 45 "$B/gpusched" paper imported run "$cfg" -o "$R/$name" > "$R/$name.log" 2>&1
	echo "rc=$?" | tee -a "$R/$name.log"
	rm -f "$cfg"
	tail -3 "$R/$name.log"
done
log done
find "$R" \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf "$OUT/import-probe.tgz" -C "$OUT" import-probe && rm -rf "$R"
