// Command acs reproduces ACS (Durvasula et al., arXiv 2401.12377; the ACS
// section of REFERENCES.md): ACS-SW and its variants, and ACS-HW on the
// simulator, against one stream and a CUDA graph rebuilt every step, on the
// rl-physics workload (and on any other family an experiment file names).
//
//	go run ./experiments/acs run -config configs/experiments/acs-sim.yaml -json docs/results/acs-sim.json
//	go run -tags cuda ./experiments/acs run -config configs/experiments/acs-gpu.yaml -json docs/results/acs-gpu.json
//	go run ./experiments/acs report -o docs/results/acs.md docs/results/acs-sim.json [docs/results/acs-gpu.json]
//
// run executes every row of an experiment file with the experiments runner
// (simulator rows in parallel, GPU rows one at a time; every row's outputs
// compared with the serial schedule's on a GPU, every row's race report
// checked on the simulator) and writes the results as JSON. report turns
// one or more such files into the Markdown results page: the speedup
// tables, the window and thread sweeps, the paper's targets met or missed,
// and the raw measurements.
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
		config := fs.String("config", "configs/experiments/acs-sim.yaml", "experiment file")
		out := fs.String("json", "", "write the results here (default: stdout)")
		workers := fs.Int("workers", 0, "simulator rows run at once (0: GOMAXPROCS)")
		fs.Parse(os.Args[2:])
		err = experiments.RunToJSON(*config, *out, *workers)
	case "report":
		fs := flag.NewFlagSet("report", flag.ExitOnError)
		out := fs.String("o", "docs/results/acs.md", "Markdown file to write")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		err = reportCmd(*out, fs.Args())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acs:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  acs run [-config acs-sim.yaml] [-json out.json] [-workers n]
  acs report [-o docs/results/acs.md] results.json...`)
	os.Exit(2)
}
