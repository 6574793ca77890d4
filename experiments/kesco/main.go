// Command kesco reproduces KeSCo's headline comparison (Lin et al., ICCD
// 2023; HuntKTm, TACO 2025; the KeSCo section of REFERENCES.md): the
// GrCUDA benchmarks and KeSCo's multi-task mixes under serial, Taskflow's
// round-robin capture, Nimble, a GrCUDA-like runtime (GrSched) and KeSCo,
// each plain and captured into one multi-stream CUDA graph, with
// stream-count sweeps, KeSCo's ablations and its multi-process mode.
//
//	go run ./experiments/kesco run -config configs/experiments/kesco-sim.yaml -json docs/results/kesco-sim.json
//	go run -tags cuda ./experiments/kesco run -config configs/experiments/kesco-gpu.yaml -json docs/results/kesco-gpu.json
//	go run ./experiments/kesco report -o docs/results/kesco.md docs/results/kesco-sim.json [docs/results/kesco-gpu.json]
//
// run executes an experiment file with the experiments runner (which
// checks races on the simulator and, on a GPU, every row's outputs against
// the serial schedule's and the CPU reference) and writes the raw results
// as JSON. report turns result files into the Markdown page: the targets,
// per-workload speedups, the sweeps, the multi-process mode, and the sync
// pruning counts of KeSCo's plans (recomputed from the experiment file).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gpusched/gpusched/experiments"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		fs := flag.NewFlagSet("run", flag.ExitOnError)
		config := fs.String("config", "configs/experiments/kesco-sim.yaml", "experiment file")
		out := fs.String("json", "", "write the raw results here (default: stdout)")
		workers := fs.Int("workers", 0, "simulator rows run at once (0: GOMAXPROCS)")
		fs.Parse(os.Args[2:])
		err = experiments.RunToJSON(*config, *out, *workers)
	case "report":
		fs := flag.NewFlagSet("report", flag.ExitOnError)
		out := fs.String("o", "docs/results/kesco.md", "Markdown file to write")
		config := fs.String("config", "configs/experiments/kesco-sim.yaml", "experiment file whose workloads the sync-pruning table recomputes")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		err = reportCmd(*out, *config, fs.Args())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kesco:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  kesco run [-config kesco-sim.yaml] [-json out.json] [-workers n]
  kesco report [-o docs/results/kesco.md] [-config kesco-sim.yaml] results.json...`)
	os.Exit(2)
}
