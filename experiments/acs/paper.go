// Package acs is the reproduction of ACS (Durvasula et al., arXiv
// 2401.12377; docs/REFERENCES.md): ACS-SW and its variants, and ACS-HW on
// the simulator, against one stream and a CUDA graph rebuilt every step, on
// the rl-physics workload (and on any other family an experiment file
// names). It registers the paper "acs":
//
//	gpusched paper acs run configs/experiments/acs-sim.yaml -o results/acs-sim
//	gpusched paper acs report -o docs/results/acs.md docs/results/acs-sim.json docs/results/acs-gpu.json
//
// The runner measures every row as gpusched run does; report turns results
// files into the page: the paper's targets met or missed, the speedup
// tables, the window and thread sweeps, and links to every row.
package acs

import "github.com/gpusched/gpusched/experiments"

func init() {
	experiments.RegisterPaper(&experiments.Paper{
		Name:    "acs",
		Title:   "ACS: out-of-order kernel scheduling for input-dependent graphs (sched/acs)",
		Configs: []string{"configs/experiments/acs-sim.yaml", "configs/experiments/acs-gpu.yaml"},
		Report:  report,
	})
}
