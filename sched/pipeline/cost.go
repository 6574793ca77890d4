package pipeline

import (
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/workloads"
)

// analyzeCostPerOp is the host's time to analyze a pipeline's jobs
// (analyze: each job's operations and buffers checked against job 0's),
// per operation of the program, measured on an H200's host (issue #18,
// session 30: configs/experiments/queue-per-run-gpu.yaml, Queue's
// setup_analyze_ns over the program's operations on heldout16-set's four
// pipelines at 3 and 4 workers, 0.20-0.43 us, median 0.40;
// docs/results/raw/queueperrun-h200.tgz). It is Go work, which the
// simulator runs in no time unless a scheduler charges it with Host.Spend
// (a GPU ignores Spend: there the work takes its real time).
const analyzeCostPerOp = 400 * time.Nanosecond

// spendAnalysis charges h the analysis of in's jobs.
func spendAnalysis(h device.Host, in *workloads.Instance) {
	ops := 0
	for _, s := range in.Prog.Steps {
		ops += len(s.Ops)
	}
	h.Spend(time.Duration(ops) * analyzeCostPerOp)
}
