#!/bin/bash
# AutoGraph's headline rows on equal terms (issue #20), in one GPU call.
#
# Here (with Go):   go build -tags cuda -ldflags='-s -w' -o .gpu/gpusched ./cmd/gpusched
# There (no Go), from the repository root with $OUT set:
#                   bash scripts/gpu/autograph-rerun.sh
# Back here:        tar xzf autograph-rerun.tgz; the results are under r/
#                   (results.json, .csv, .md, the table on stdout in run.log,
#                   nvidia-smi.txt); commit them as docs/results/autograph-rerun-gpu.json
#                   and docs/results/raw/autograph-rerun.tgz, then
#                   gpusched paper autograph report -o docs/results/autograph.md \
#                       docs/results/autograph-sim.json docs/results/autograph-gpu.json docs/results/autograph-rerun-gpu.json
#
# DEVICE=h100 runs the same binary on the simulated H100 instead (to test
# this script without a GPU); BIN overrides the binary.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.gpu/gpusched}
CFG=configs/experiments/autograph-rerun-gpu.yaml
: "${OUT:?set OUT to the folder that comes back}"
mkdir -p "$OUT/r"
if [ -n "${DEVICE:-}" ]; then
  sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" $CFG > "$OUT/r/config.yaml"
else
  cp $CFG "$OUT/r/config.yaml"
fi
{ date -u; nvidia-smi; } > "$OUT/r/nvidia-smi.txt" 2>&1
git log -1 --format='%H %s' > "$OUT/r/commit.txt" 2>/dev/null || echo "no git" > "$OUT/r/commit.txt"
s=$(date +%s)
timeout 240 "$BIN" paper autograph run "$OUT/r/config.yaml" -o "$OUT/r/results" > "$OUT/r/run.log" 2> "$OUT/r/stderr.log"
rc=$?
echo "rc=$rc $(( $(date +%s) - s ))s" | tee "$OUT/r/status.txt"
tail -40 "$OUT/r/run.log"
cd "$OUT" && tar czf autograph-rerun.tgz r && rm -rf r
