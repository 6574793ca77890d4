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
#
# DEVICE=h100 runs the same binary on the simulated H100 instead (to test
# this script without a GPU); BIN overrides the binary, LIMIT the seconds,
# CFG the experiment file.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.gpu/port/gpusched}
LIMIT=${LIMIT:-200}
CFG=${CFG:-configs/experiments/portfolio-probe.yaml}
: "${OUT:?set OUT to the folder that comes back}"
if [ ! -e "$BIN" ] && [ -f "$BIN.gz" ]; then
  gunzip -c "$BIN.gz" > "$BIN" && chmod +x "$BIN" || exit 1
fi
mkdir -p "$OUT/r"
if [ -n "${DEVICE:-}" ]; then
  sed "s/^devices: \[cuda\]/devices: [$DEVICE]/" "$CFG" > "$OUT/r/config.yaml"
else
  cp "$CFG" "$OUT/r/config.yaml"
fi
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
cd "$OUT" && tar czf port.tgz r && rm -rf r
