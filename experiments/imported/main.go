// Command imported replays PyTorch models recorded by
// scripts/gpu/capture_pytorch.py and imported with `gpusched import kineto`
// (configs/workloads/pytorch), under serial, serial+graph and every
// multi-stream strategy, on a GPU and on the simulator, and writes
// docs/results/imported.md against PyTorch's own eager and CUDA-graph times.
//
//	go run ./experiments/imported run -config configs/experiments/imported-sim.yaml -json docs/results/imported-sim.json
//	bash scripts/gpu/imported-replay.sh                      # on the GPU host: imported-gpu.json
//	go run ./experiments/imported report -capture docs/results/imported-capture.json \
//	    -o docs/results/imported.md docs/results/imported-sim.json docs/results/imported-gpu.json
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
		config := fs.String("config", "configs/experiments/imported-sim.yaml", "experiment file")
		out := fs.String("json", "", "write the raw results here (default: stdout)")
		workers := fs.Int("workers", 0, "simulator rows run at once (0: GOMAXPROCS)")
		fs.Parse(os.Args[2:])
		err = experiments.RunToJSON(*config, *out, *workers)
	case "report":
		fs := flag.NewFlagSet("report", flag.ExitOnError)
		out := fs.String("o", "docs/results/imported.md", "Markdown file to write")
		capture := fs.String("capture", "docs/results/imported-capture.json", "the capture script's summary (PyTorch's times)")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		err = report(*out, *capture, fs.Args())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "imported:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  imported run [-config imported-sim.yaml] [-json out.json] [-workers n]
  imported report [-o docs/results/imported.md] [-capture imported-capture.json] results.json...`)
	os.Exit(2)
}
