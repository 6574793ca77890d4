// Package kesco is the reproduction of KeSCo (Lin et al., ICCD 2023;
// HuntKTm, TACO 2025; docs/REFERENCES.md): the GrCUDA benchmarks and
// KeSCo's multi-task mixes under serial, Taskflow's round-robin capture,
// Nimble, a GrCUDA-like runtime (GrSched) and KeSCo, each plain and
// captured into one multi-stream CUDA graph, with stream-count sweeps,
// KeSCo's ablations and its multi-process mode. It registers the paper
// "kesco":
//
//	gpusched paper kesco run configs/experiments/kesco-sim.yaml -o results/kesco-sim
//	gpusched paper kesco report -o docs/results/kesco.md docs/results/kesco-sim.json docs/results/kesco-gpu.json
//
// report writes the page: the targets, per-workload speedups, the sweeps,
// the multi-process mode, and the sync pruning of KeSCo's plans
// (recomputed for the first file's workloads).
package kesco

import "github.com/gpusched/gpusched/experiments"

func init() {
	experiments.RegisterPaper(&experiments.Paper{
		Name:    "kesco",
		Title:   "KeSCo: kernel stream coordination of multi-task workloads (sched/graph)",
		Configs: []string{"configs/experiments/kesco-sim.yaml", "configs/experiments/kesco-gpu.yaml"},
		Report:  report,
	})
}
