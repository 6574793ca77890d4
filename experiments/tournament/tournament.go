// Package tournament is the tournament of issue #20 as a paper of its own
// (gpusched paper tournament run|report): every scheduler that applies, on
// a representative workload of every family, on the simulator and on the
// GPU, with gpusched's portfolio scheduler (sched/portfolio) among them.
// Whether a scheduler applies is computed (the runner leaves the others'
// rows unrun, Paper.OnlyApplicable); the report (report.go) writes
// docs/results/tournament.md: a table and a heatmap of speedups over
// serial with the winner per workload, GPU and simulator side by side, and
// the portfolio's regret against each workload's winner.
package tournament

import "github.com/gpusched/gpusched/experiments"

func init() {
	experiments.RegisterPaper(&experiments.Paper{
		Name:           "tournament",
		Title:          "every scheduler that applies on a workload of every family, and gpusched's portfolio",
		Configs:        []string{"configs/experiments/tournament-sim.yaml", "configs/experiments/tournament-gpu.yaml"},
		OnlyApplicable: true,
		Report:         Report,
	})
}
