// Package autograph is the reproduction of AutoGraph (Zhao et al., AAAI
// 2023; docs/REFERENCES.md): batch-1 inference graphs of workloads/dnn
// under AutoGraph's search (sched/graph) against one stream captured into a
// CUDA graph, Nimble, Taskflow's round-robin and IOS's stages, all captured
// into CUDA graphs, with an alpha sweep and the search times. It registers
// the paper "autograph":
//
//	gpusched paper autograph run configs/experiments/autograph-sim.yaml -o results/autograph-sim
//	gpusched paper autograph report -o docs/results/autograph.md docs/results/autograph-sim.json docs/results/autograph-gpu.json docs/results/autograph-rerun-gpu.json
//
// report writes the page, recomputing the search (partitions, states
// explored, wall-clock search time) for the first file's models and every
// alpha on the simulated H100.
package autograph

import "github.com/gpusched/gpusched/experiments"

func init() {
	experiments.RegisterPaper(&experiments.Paper{
		Name:    "autograph",
		Title:   "AutoGraph: searched multi-stream schedules of static inference graphs (sched/graph)",
		Configs: []string{"configs/experiments/autograph-sim.yaml", "configs/experiments/autograph-gpu.yaml", "configs/experiments/autograph-rerun-gpu.yaml"},
		Report:  report,
	})
}
