#!/bin/bash
# Is the portfolio's timed run of its pick slower than the bare pick on the
# GPU (issue #20)? configs/experiments/portfolio-probe.yaml, in one call.
#
# Here (with Go):   go build -tags cuda -ldflags='-s -w' -o .gpu/port/gpusched ./cmd/gpusched
#                   git log -1 --format='%H %s' > .gpu/port/BUILD
#                   gzip -f .gpu/port/gpusched    (unpacked there)
# There (no Go), from the repository root with $OUT set (carry .gpu/port):
#                   bash scripts/gpu/portfolio-probe.sh
# Back here:        tar xzf port.tgz; r/results/results.json is
#                   docs/results/portfolio-probe-gpu-CARD.json, the table
#                   r/run.log; the tarball goes to docs/results/raw/.
# BEFORE: if .gpu/port/before/gpusched(.gz) is there (the binary of the
# tournament's r4 and r5, main 55db5f3, with its BUILD), it then runs the
# same probe without the pick rows (that binary has no pick), REPS_BEFORE
# rounds, into r/before/: the portfolio's selection as r5 made it.
#
# DEVICE=h100 runs the same binary on the simulated H100 instead (to test
# this script without a GPU); BIN overrides the binary, LIMIT the seconds,
# CFG the experiment file.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.gpu/port/gpusched}
LIMIT=${LIMIT:-130}
LIMIT_BEFORE=${LIMIT_BEFORE:-80}
REPS_BEFORE=${REPS_BEFORE:-12}
CFG=${CFG:-configs/experiments/portfolio-probe.yaml}
: "${OUT:?set OUT to the folder that comes back}"
unpack() { if [ ! -e "$1" ] && [ -f "$1.gz" ]; then gunzip -c "$1.gz" > "$1" && chmod +x "$1"; fi; }
unpack "$BIN" || exit 1
mkdir -p "$OUT/r"
DEV=${DEVICE:-cuda}
sed "s/^devices: \[cuda\]/devices: [$DEV]/" "$CFG" > "$OUT/r/config.yaml"
{ date -u; nvidia-smi; nproc; } > "$OUT/r/nvidia-smi.txt" 2>&1
# BUILD, written beside the binary when it was built, names its commit.
{ echo "binary: $(cat "$(dirname "$BIN")/BUILD" 2>/dev/null || echo 'no BUILD file')"; "$BIN" version
  git log -1 --format='tree: %H %s'; } > "$OUT/r/commit.txt" 2>&1
s=$(date +%s)
# Rows are saved as each workload's group finishes (results/rows.jsonl).
timeout "$LIMIT" "$BIN" run "$OUT/r/config.yaml" -o "$OUT/r/results" > "$OUT/r/run.log" 2> "$OUT/r/stderr.log"
rc=$?
echo "rc=$rc $(( $(date +%s) - s ))s" | tee "$OUT/r/status.txt"
tail -20 "$OUT/r/run.log"
B=$(dirname "$BIN")/before/gpusched
unpack "$B"
if [ -x "$B" ]; then
  mkdir -p "$OUT/r/before"
  grep -v 'kind: portfolio, params: {pick:' "$OUT/r/config.yaml" |
    sed "s/^repetitions: .*/repetitions: $REPS_BEFORE/" > "$OUT/r/before/config.yaml"
  { echo "binary: $(cat "$(dirname "$B")/BUILD" 2>/dev/null || echo 'no BUILD file')"; "$B" version; } > "$OUT/r/before/commit.txt" 2>&1
  s=$(date +%s)
  timeout "$LIMIT_BEFORE" "$B" run "$OUT/r/before/config.yaml" -o "$OUT/r/before/results" > "$OUT/r/before/run.log" 2> "$OUT/r/before/stderr.log"
  echo "before rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/r/status.txt"
  tail -14 "$OUT/r/before/run.log"
fi
cd "$OUT" && tar czf port.tgz r && rm -rf r
