#!/bin/bash
# Reruns committed paper experiments on the GPU with the current code, in one
# device call: each argument is PAPER:FILE:SECONDS (FILE an experiment file or
# a committed results file, whose recorded experiment is rerun; SECONDS the
# run's time limit). Rows are saved as each workload group finishes, so a run
# cut short by its limit keeps what it measured.
#
# Here (with Go):   go build -tags cuda -ldflags='-s -w' -o .gpu/rerun/gpusched ./cmd/gpusched
#                   git log -1 --format='%H %s' > .gpu/rerun/BUILD; gzip -f .gpu/rerun/gpusched
# There (no Go), from the repository root with $OUT set (carry .gpu/rerun):
#   bash scripts/gpu/paper-rerun.sh acs:configs/experiments/acs-gpu-confirm.yaml:200 set:docs/results/set-gpu-v10.json:150
# Back here:        tar xzf rerun.tgz; r/<paper>-<i>/results.json (or rows.jsonl)
#                   becomes docs/results/<name>.json, the tarball docs/results/raw/.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-.gpu/rerun/gpusched}
: "${OUT:?set OUT to the folder that comes back}"
if [ ! -e "$BIN" ] && [ -f "$BIN.gz" ]; then
  gunzip -c "$BIN.gz" > "$BIN" && chmod +x "$BIN" || exit 1
fi
mkdir -p "$OUT/r"
{ date -u; nvidia-smi; nproc; } > "$OUT/r/nvidia-smi.txt" 2>&1
{ echo "binary: $(cat "$(dirname "$BIN")/BUILD" 2>/dev/null || echo 'no BUILD file')"; "$BIN" --version; } > "$OUT/r/commit.txt" 2>&1
i=0
for spec in "$@"; do
  IFS=: read -r paper file limit <<< "$spec"
  i=$((i + 1))
  d="$OUT/r/$paper-$i"
  mkdir -p "$d"
  s=$(date +%s)
  echo "== $spec" | tee -a "$OUT/r/status.txt"
  timeout "${limit:-300}" "$BIN" paper "$paper" run "$file" -o "$d" > "$d/run.log" 2> "$d/stderr.log"
  echo "rc=$? $(( $(date +%s) - s ))s" | tee -a "$OUT/r/status.txt"
  tail -5 "$d/run.log"
done
cd "$OUT" && tar czf rerun.tgz r && rm -rf r
