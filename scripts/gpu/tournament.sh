#!/bin/bash
# The tournament on the GPU (issue #20), in one call.
#
# Here (with Go):   go build -tags cuda -ldflags='-s -w' -o .gpu/gpusched ./cmd/gpusched
# There (no Go), from the repository root with $OUT set:
#                   bash scripts/gpu/tournament.sh
# Back here:        tar xzf tournament.tgz; r/results/results.json is
#                   docs/results/tournament-gpu.json; the table on stdout is
#                   r/run.log; the tarball goes to docs/results/raw/. Then
#                   gpusched paper tournament report -o docs/results/tournament.md \
#                       docs/results/tournament-gpu.json docs/results/tournament-sim.json
#
# DEVICE=h100 runs the same binary on the simulated H100 instead (to test
# this script without a GPU); BIN overrides the binary, LIMIT the seconds,
# CFG the experiment file.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.gpu/gpusched}
LIMIT=${LIMIT:-420}
CFG=${CFG:-configs/experiments/tournament-gpu.yaml}
: "${OUT:?set OUT to the folder that comes back}"
mkdir -p "$OUT/r"
if [ -n "${DEVICE:-}" ]; then
  sed "s/^devices: \[cuda\]/devices: [$DEVICE]/" $CFG > "$OUT/r/config.yaml"
else
  cp $CFG "$OUT/r/config.yaml"
fi
{ date -u; nvidia-smi; nproc; } > "$OUT/r/nvidia-smi.txt" 2>&1
git log -1 --format='%H %s' > "$OUT/r/commit.txt" 2>/dev/null || echo "no git" > "$OUT/r/commit.txt"
s=$(date +%s)
# Rows are saved as they finish (results/journal); a run cut short by the
# limit keeps them, and the table in run.log.
timeout "$LIMIT" "$BIN" paper tournament run "$OUT/r/config.yaml" -o "$OUT/r/results" > "$OUT/r/run.log" 2> "$OUT/r/stderr.log"
rc=$?
echo "rc=$rc $(( $(date +%s) - s ))s" | tee "$OUT/r/status.txt"
tail -30 "$OUT/r/run.log"
cd "$OUT" && tar czf tournament.tgz r && rm -rf r
