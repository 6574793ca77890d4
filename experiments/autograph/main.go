// Command autograph reproduces AutoGraph's headline comparison (Zhao et al.,
// AAAI 2023; the AutoGraph section of REFERENCES.md): batch-1 inference
// graphs of workloads/dnn under AutoGraph's search (sched/graph) against one
// stream captured into a CUDA graph, Nimble, Taskflow's round-robin and
// IOS's stages, all captured into CUDA graphs, with an alpha sweep and the
// search times.
//
//	go run ./experiments/autograph run -config configs/experiments/autograph-sim.yaml -json docs/results/autograph-sim.json
//	go run -tags cuda ./experiments/autograph run -config configs/experiments/autograph-gpu.yaml -json docs/results/autograph-gpu.json
//	go run ./experiments/autograph report -o docs/results/autograph.md docs/results/autograph-sim.json [docs/results/autograph-gpu.json]
//
// run executes an experiment file with the experiments runner and writes
// the raw results as JSON; report writes the Markdown page, recomputing the
// search (partitions, states explored, wall-clock search time) for every
// model and alpha on the simulated H100.
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
		config := fs.String("config", "configs/experiments/autograph-sim.yaml", "experiment file")
		out := fs.String("json", "", "write the raw results here (default: stdout)")
		workers := fs.Int("workers", 0, "simulator rows run at once (0: GOMAXPROCS)")
		fs.Parse(os.Args[2:])
		err = experiments.RunToJSON(*config, *out, *workers)
	case "report":
		fs := flag.NewFlagSet("report", flag.ExitOnError)
		out := fs.String("o", "docs/results/autograph.md", "Markdown file to write")
		config := fs.String("config", "configs/experiments/autograph-sim.yaml", "experiment file whose workloads the search-time table recomputes")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		err = reportCmd(*out, *config, fs.Args())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "autograph:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  autograph run [-config autograph-sim.yaml] [-json out.json] [-workers n]
  autograph report [-o docs/results/autograph.md] [-config autograph-sim.yaml] results.json...`)
	os.Exit(2)
}
