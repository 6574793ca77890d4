#!/bin/bash
# A GPU campaign in one lent-GPU call: the papers' GPU experiment files,
# each split into its shards (one per workload: a GPU group's schedulers are
# measured together) and each shard run under its own timeout, within a
# global budget. A shard cut short keeps its finished rows (rows.jsonl);
# a later call with PREV set continues it.
#
# Here (with Go):
#   go build -tags cuda -ldflags='-s -w' -o .gpu/gpusched ./cmd/gpusched
# There (no Go), from the repository root with $OUT set:
#   bash scripts/gpu/batch-papers.sh BUDGET CAP PAPER:CONFIG...
#   e.g. bash scripts/gpu/batch-papers.sh 550 60 acs:configs/experiments/acs-gpu.yaml cusync:configs/experiments/cusync-gpu.yaml
# Back here, from the returned papers.tgz (r/NAME/shard-K/ per shard):
#   gpusched merge -o results/NAME r/NAME/shard-*/results.json   # refuses an incomplete set
#   cp results/NAME/results.json docs/results/NAME.json; commit papers.tgz under docs/results/raw/
# To finish the shards a call left undone, carry r/ to the next call and set
# PREV=<that folder>: finished shards are kept, cut ones resume (--resume).
#
# BIN overrides the binary; DEVICE=h100 runs the same files on the
# simulated H100 (to test this script without a GPU).
set -u
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder that comes back}"
BIN=${BIN:-.gpu/gpusched}
budget=$1; cap=$2; shift 2
start=$(date +%s)
mkdir -p "$OUT/r"
{ date -u; nvidia-smi; } > "$OUT/r/nvidia-smi.txt" 2>&1
git log -1 --format='%H %s' > "$OUT/r/commit.txt" 2>/dev/null || echo "no git" > "$OUT/r/commit.txt"
for job in "$@"; do
  paper=${job%%:*}; cfg=${job#*:}; name=$(basename "$cfg" .yaml)
  mkdir -p "$OUT/r/$name"
  if [ -n "${DEVICE:-}" ]; then
    sed "s|^devices: \[cuda\]|devices: [$DEVICE]|" "$cfg" > "$OUT/r/$name/$name.yaml"
    cfg="$OUT/r/$name/$name.yaml"
  fi
  n=$("$BIN" run "$cfg" --count-shards) || { echo "$name: $cfg does not load"; continue; }
  for k in $(seq 1 "$n"); do
    dir="$OUT/r/$name/shard-$k"
    prev="${PREV:-/nonexistent}/$name/shard-$k"
    [ -d "$prev" ] && cp -r "$prev" "$dir"
    if [ -f "$dir/results.json" ]; then echo "$name shard $k/$n: done earlier"; continue; fi
    left=$(( budget - ($(date +%s) - start) ))
    if [ "$left" -lt 15 ]; then echo "$name shard $k/$n: skipped (budget)" | tee -a "$OUT/r/skipped.txt"; continue; fi
    t=$(( left < cap ? left : cap )); s=$(date +%s)
    mkdir -p "$dir"
    timeout "$t" "$BIN" paper "$paper" run "$cfg" --shard "$k/$n" --resume -o "$dir" > "$dir/run.log" 2>&1
    echo "$name shard $k/$n rc=$? $(( $(date +%s) - s ))s"
  done
done
cd "$OUT" && tar czf papers.tgz r && rm -rf r
