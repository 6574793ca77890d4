#!/bin/bash
# GPU batch: run split experiment files of the given papers, each with its own
# timeout, within a global budget (seconds). Usage: batch.sh BUDGET CAP paper...
cd "$(dirname "$0")/../.."
B=${B:-.gpu/b2}   # binaries built here (see README.md in this folder), carried to the GPU host; B=dir overrides
budget=$1; cap=$2; shift 2
start=$(date +%s)
mkdir -p $OUT/r
{ date -u; nvidia-smi; } > $OUT/r/nvidia-smi.txt 2>&1
for paper in "$@"; do
  mkdir -p $OUT/r/$paper
  for f in $B/split/$paper/*.yaml; do
    n=$(basename $f .yaml)
    left=$(( budget - ($(date +%s) - start) ))
    if [ $left -lt 15 ]; then echo "SKIP $n (budget)"; echo "$n skipped: budget" >> $OUT/r/skipped.txt; continue; fi
    t=$(( left < cap ? left : cap ))
    s=$(date +%s)
    timeout $t $B/gpusched paper $paper run $f -o $OUT/r/$paper/$n > $OUT/r/$paper/$n.log 2>&1
    rc=$?
    echo "$n rc=$rc $(( $(date +%s) - s ))s"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
