// Package set is the reproduction of SET (Li, Huang and Ogras, arXiv
// 2606.05495; docs/REFERENCES.md): the pipeline workloads of
// workloads/jobs under SET (sched/pipeline) and its four baselines, with
// the throughput in each workload's unit and the scheduling share of SET's
// overhead model, from the schedulers' own Metrics(). It registers the
// paper "set" with the experiments runner:
//
//	gpusched paper set run configs/experiments/set-sim.yaml -o results/set-sim
//	gpusched paper set report -o docs/results/set.md --notes docs/results/set-notes.md docs/results/set-sim.json ...
//
// The runner measures every row as gpusched run does (on a GPU, interleaved
// rounds with outputs poisoned after Prepare and compared with the serial
// schedule's); report turns results files into the page: the headline
// tables (SET and each variant against Queue and Batching at the same b),
// the overhead model where rows recorded it, and links to every row.
package set

import "github.com/gpusched/gpusched/experiments"

func init() {
	experiments.RegisterPaper(&experiments.Paper{
		Name:    "set",
		Title:   "SET: pipelines of many jobs (sched/pipeline against Queue, Batching, graph-per-job, synchronous)",
		Configs: []string{"configs/experiments/set-sim.yaml", "configs/experiments/set-gpu.yaml"},
		Report:  report,
	})
}
