// Package imported replays PyTorch models recorded by
// scripts/gpu/capture_pytorch.py and imported with `gpusched import kineto`
// (configs/workloads/pytorch) under serial, serial+graph and the
// multi-stream strategies, on a GPU and on the simulator, against PyTorch's
// own eager and CUDA-graph times (issue #19). It registers "imported":
//
//	gpusched paper imported run configs/experiments/imported-sim.yaml -o results/imported-sim
//	bash scripts/gpu/imported-replay.sh       # on the GPU host
//	gpusched paper imported report -o docs/results/imported.md --notes docs/results/imported-notes.md docs/results/imported-*.json
//
// report reads PyTorch's times from the capture's summary under the page's folder
// (raw/imported-capture.json, and the chain probe's raw/imported-chain-capture.json);
// experiments named "*-o0" (the graph-replay traces at overhead_ns 0) are
// kept apart from the others' rows; those named "*-v2*" (the replay
// kernel's second version) from the first version's, and within the
// second, those whose workloads set profiler_ns from those that did not:
// the page leads with the newest run and shows the others below it.
// Experiments named "*-heldout*" (scripts/gpu/imported-heldout.sh: models
// the importer was not developed on) make a page of their own from
// raw/imported-heldout-capture.json:
//
//	gpusched paper imported report -o docs/results/imported-heldout.md docs/results/imported*-heldout-*.json
package imported

import "github.com/gpusched/gpusched/experiments"

func init() {
	experiments.RegisterPaper(&experiments.Paper{
		Name:  "imported",
		Title: "imported PyTorch models (issue #19): replay on the GPU and the simulator against PyTorch eager and graph times",
		Configs: []string{"configs/experiments/imported-v2-sim.yaml", "configs/experiments/imported-graph-v2-sim.yaml", "configs/experiments/imported-graph-v2-sim-o0.yaml",
			"configs/experiments/imported-chain-v2-sim.yaml", "configs/experiments/imported-chain-v2-sim-o0.yaml",
			"configs/experiments/imported-v2-predict-sim.yaml", "configs/experiments/imported-graph-v2-predict-sim.yaml", "configs/experiments/imported-graph-v2-p818-sim-o0.yaml",
			"configs/experiments/imported-v3-sim.yaml", "configs/experiments/imported-graph-v3-sim.yaml", "configs/experiments/imported-graph-v3-sim-o0.yaml",
			"configs/experiments/imported-v4-sim.yaml", "configs/experiments/imported-graph-v4-sim.yaml", "configs/experiments/imported-graph-v4-sim-o0.yaml",
			"configs/experiments/imported-v4-sim-measured.yaml", "configs/experiments/imported-graph-v4-sim-measured.yaml",
			"configs/experiments/imported-v5-sim.yaml", "configs/experiments/imported-graph-v5-sim.yaml", "configs/experiments/imported-graph-v5-sim-o0.yaml",
			"configs/experiments/imported-v6-sim.yaml", "configs/experiments/imported-graph-v6-sim.yaml", "configs/experiments/imported-graph-v6-sim-o0.yaml",
			"configs/experiments/imported-v6-sim-measured.yaml", "configs/experiments/imported-graph-v6-sim-measured.yaml",
			"configs/experiments/imported-v7-sim-measured.yaml", "configs/experiments/imported-graph-v7-sim-measured.yaml",
			"configs/experiments/imported-v8-sim-measured.yaml", "configs/experiments/imported-graph-v8-sim-measured.yaml",
			"configs/experiments/imported-v9-sim-measured.yaml", "configs/experiments/imported-graph-v9-sim-measured.yaml",
			"configs/experiments/imported-gpu.yaml", "configs/experiments/imported-graph-gpu.yaml",
			"configs/experiments/imported-sim.yaml", "configs/experiments/imported-graph-sim.yaml", "configs/experiments/imported-graph-sim-o0.yaml"},
		Report: report,
	})
}
