#!/bin/bash
cd "$(dirname "$0")/../.."
B=.gpu/b1
mkdir -p $OUT/r
run() { local name=$1 t=$2; shift 2; echo "== $name ($(date -u +%T))"; timeout $t "$@" > $OUT/r/$name.log 2>&1; echo "rc=$?" | tee -a $OUT/r/$name.log; tail -6 $OUT/r/$name.log; }
run quickstart-gpu 120 $B/gpusched run configs/experiments/quickstart-gpu.yaml -o $OUT/r/quickstart-gpu
(cd sched/acs && OUT=$OUT run acs-gpu-test 150 ../../$B/acs.test -test.run GPU -test.v -test.timeout 140s)
run dnn-gpu-check 160 $B/gpusched run workloads/dnn/testdata/gpu-check.yaml -o $OUT/r/dnn-gpu-check
cd $OUT && tar czf r.tgz r && rm -rf r
