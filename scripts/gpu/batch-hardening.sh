#!/bin/bash
# GPU batch C: AutoGraph, hardening (driver faults, soak, mutation suite),
# quickstart, DNN check, calibration. Each step has its own timeout.
cd "$(dirname "$0")/../.."
B=$PWD/.gpu/b3
R=$OUT/r; mkdir -p $R/autograph
{ date -u; nvidia-smi; } > $R/nvidia-smi.txt 2>&1
step() { local name=$1 t=$2; shift 2; local s=$(date +%s); timeout $t "$@" > $R/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s) - s ))s"; }
for f in $B/split-autograph/*.yaml; do n=$(basename $f .yaml); step ag-$n 40 $B/autograph run -config $f -json $R/autograph/$n.json; done
(cd device/cuda && step cuda-faults 40 $B/cuda.test -test.run 'TestInjectedDriverFailures|TestRunSetupFailure|TestInjectFault' -test.v)
step soak 130 $B/soak -device cuda -kernels 1000000 -budget 10s -samples 10 -out $R/soak.md
step quickstart-gpu 50 $B/gpusched run configs/experiments/quickstart-gpu.yaml -o $R/quickstart-gpu
(cd hardening && HARDENING_GPU_REPORT=$R/gpu-mutation.txt step gpu-mutation 70 $B/hardening.test -test.run TestGPUMutationSuite -test.v -test.timeout 65s)
step dnn-gpu-check 45 $B/gpusched run workloads/dnn/testdata/gpu-check.yaml -o $R/dnn-gpu-check
(cd calibrate && step calibrate 45 $B/calibrate.test -test.run TestCalibrateGPU -test.v -calibrate.out=$R/measured-h200.yaml)
cd $OUT && tar czf r.tgz r && rm -rf r
