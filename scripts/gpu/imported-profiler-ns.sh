#!/bin/bash
# The imported PyTorch models (issue #19) replayed on the GPU with
# profiler_ns taken off every recorded kernel duration (the file family's
# parameter, docs/WORKLOADS.md): what the profiler records beyond a kernel's
# work, measured by scripts/gpu/imported-chain-probe.py with a known sleep
# kernel on the same GPU (818 ns on session 3's H100,
# docs/results/raw/imported-replay-v2-h100.tgz), with the replay kernel's
# overhead_ns and floor_ns from TestGPUReplayProbe (imported-replay.sh step 1;
# 416 and 1247 ns there). From the repository root, with $OUT set and no Go
# toolchain:
#
#   OUT=$OUT bash scripts/gpu/imported-profiler-ns.sh
#
# It rewrites configs/experiments/imported-gpu.yaml and imported-graph-gpu.yaml
# with sed (each workload's overhead_ns and floor_ns replaced by these three
# parameters, the experiment renamed imported-v2-p<PROFILER_NS> and
# imported-graph-v2-p<PROFILER_NS>), runs each for at most 150 s and packs
# the results, logs, configs, build.txt and device.txt into $OUT/p<PROFILER_NS>.tgz
# (about 60 s on an H100). Session 3 ran the same steps as .gpu/p818/run.sh
# (OUT=$OUT bash .gpu/p818/run.sh, binary of main 26fb33c); this copy only
# names its settings. The binary, built here:
#
#   mkdir -p .gpu/p818
#   go build -tags cuda -ldflags='-s -w' -o .gpu/p818/gpusched ./cmd/gpusched
#   gzip -9 .gpu/p818/gpusched; git log -1 --format='%H %s' > .gpu/p818/BUILD
set -u
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?set OUT to the output folder}"
B=${B:-.gpu/p818}
OVERHEAD_NS=${OVERHEAD_NS:-416}
FLOOR_NS=${FLOOR_NS:-1247}
PROFILER_NS=${PROFILER_NS:-818}
tag=p$PROFILER_NS
gzip -dc $B/gpusched.gz > $B/gpusched && chmod +x $B/gpusched
R=$OUT/$tag; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > $R/device.txt 2>&1
{ cat $B/BUILD; date -u; } > $R/build.txt
for x in imported imported-graph; do
  name=$x-v2-$tag
  cfg=configs/experiments/$name-run.yaml
  sed -E -e "s/overhead_ns: [0-9]+, floor_ns: [0-9]+/overhead_ns: $OVERHEAD_NS, floor_ns: $FLOOR_NS, profiler_ns: $PROFILER_NS/" -e "s/^name: .*/name: $name/" configs/experiments/$x-gpu.yaml > $cfg
  cp $cfg $R/
  timeout 150 $B/gpusched paper imported run $cfg -o $R/$name > $R/$name.log 2>&1
  echo "$name rc=$?" | tee -a $R/status.txt
  rm -f $cfg
  grep -E "serial\+graph|^\S+ +serial " $R/$name.log | head -30
done
find $R \( -name '*.pdf' -o -name '*.svg' \) -delete
tar czf $OUT/$tag.tgz -C $OUT $tag
