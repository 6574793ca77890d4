#!/bin/bash
# The tournament on the GPU (issue #20), in one call.
#
# Here (with Go):   go build -tags cuda -ldflags='-s -w' -o .gpu/tour/gpusched ./cmd/gpusched
#                   git log -1 --format='%H %s' > .gpu/tour/BUILD
#                   gzip .gpu/tour/gpusched      (optional: 17 MB -> 7; unpacked there)
# There (no Go), from the repository root with $OUT set (carry .gpu/tour):
#                   bash scripts/gpu/tournament.sh
# Back here:        tar xzf tour.tgz; r/results/results.json (or, if the
#                   limit cut the run short, the finished groups' rows in
#                   r/results/rows.jsonl) is docs/results/tournament-gpu-CARD-rN.json;
#                   the table on stdout is r/run.log, chunk-graph's outputs
#                   test r/pipeline-gpu-test.log; the tarball goes to
#                   docs/results/raw/. Then gpusched paper tournament report
#                   -o docs/results/tournament.md GPU-RESULTS... docs/results/tournament-sim.json
#
# DEVICE=h100 runs the same binary on the simulated H100 instead (to test
# this script without a GPU); BIN overrides the binary, LIMIT the seconds,
# CFG the experiment file.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.gpu/tour/gpusched}
LIMIT=${LIMIT:-325}
CFG=${CFG:-configs/experiments/tournament-gpu.yaml}
: "${OUT:?set OUT to the folder that comes back}"
if [ ! -e "$BIN" ] && [ -f "$BIN.gz" ]; then
  gunzip -c "$BIN.gz" > "$BIN" && chmod +x "$BIN" || exit 1
fi
mkdir -p "$OUT/r"
if [ -n "${DEVICE:-}" ]; then
  sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" $CFG > "$OUT/r/config.yaml"
else
  cp $CFG "$OUT/r/config.yaml"
fi
{ date -u; nvidia-smi; nproc; } > "$OUT/r/nvidia-smi.txt" 2>&1
# The copy's git metadata can lag the tree: BUILD, written beside the
# binary when it was built, names the commit it was built from.
{ echo "binary: $(cat "$(dirname "$BIN")/BUILD" 2>/dev/null || echo 'no BUILD file')"; "$BIN" --version
  git log -1 --format='tree: %H %s'; } > "$OUT/r/commit.txt" 2>&1
s=$(date +%s)
# Rows are saved as each workload's group finishes (results/rows.jsonl); a
# run cut short by the limit (SIGTERM) keeps them.
timeout "$LIMIT" "$BIN" paper tournament run "$OUT/r/config.yaml" -o "$OUT/r/results" > "$OUT/r/run.log" 2> "$OUT/r/stderr.log"
rc=$?
echo "rc=$rc $(( $(date +%s) - s ))s" | tee "$OUT/r/status.txt"
# chunk-graph's outputs against serial's on every job workload (sched/pipeline
# TestGPUChunkGraphMatchesSerial), when its test binary came along:
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/tour/pipeline.test ./sched/pipeline && gzip .gpu/tour/pipeline.test
T=$(dirname "$BIN")/pipeline.test
if [ ! -e "$T" ] && [ -f "$T.gz" ]; then gunzip -c "$T.gz" > "$T" && chmod +x "$T"; fi
if [ -x "$T" ]; then   # (without a GPU it skips)
  s=$(date +%s)
  timeout 90 "$T" -test.run GPU -test.v > "$OUT/r/pipeline-gpu-test.log" 2>&1
  echo "pipeline test rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/r/status.txt"
fi
tail -30 "$OUT/r/run.log"
cd "$OUT" && tar czf tour.tgz r && rm -rf r
