// Command set reproduces SET's headline comparison (Li, Huang and Ogras,
// arXiv 2606.05495; the SET section of REFERENCES.md): the pipeline
// workloads of workloads/jobs under SET and its four baselines, with the
// throughput in each workload's unit and the scheduling share of SET's
// overhead model, from the schedulers' own Metrics().
//
//	go run ./experiments/set run -config configs/experiments/set-sim.yaml -json docs/results/set-sim.json
//	go run -tags cuda ./experiments/set run -config configs/experiments/set-gpu.yaml -json docs/results/set-gpu.json
//	go run -tags cuda ./experiments/set run -config configs/experiments/set-gpu-v2.yaml -json docs/results/set-gpu-v2.json
//	go run -tags cuda ./experiments/set run -config configs/experiments/set-gpu-v6.yaml -json docs/results/set-gpu-v6.json
//	go run ./experiments/set report -o docs/results/set.md -notes docs/results/set-notes.md docs/results/set-sim.json docs/results/set-gaps-sim.json [docs/results/set-gpu.json docs/results/set-gpu-v2.json]
//
// run executes every (workload, device, scheduler) row of an experiment
// file, each repetition a fresh scheduler on a freshly bound program
// (simulator rows in parallel; on a GPU the schedulers of one workload in
// interleaved rounds, one repetition of each per round in an order
// rotating by one), checks the simulator's race report on every row and,
// on a GPU, every job's output against its CPU reference after every run
// (the outputs poisoned with NaN after Prepare, so only what the run wrote
// can pass), and writes the raw measurements as JSON.
// report turns one or more such files into the Markdown results page.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		fs := flag.NewFlagSet("run", flag.ExitOnError)
		config := fs.String("config", "configs/experiments/set-sim.yaml", "experiment file")
		out := fs.String("json", "", "write the raw results here (default: stdout)")
		workers := fs.Int("workers", 0, "simulator rows run at once (0: GOMAXPROCS)")
		fs.Parse(os.Args[2:])
		err = runCmd(*config, *out, *workers)
	case "report":
		fs := flag.NewFlagSet("report", flag.ExitOnError)
		out := fs.String("o", "docs/results/set.md", "Markdown file to write")
		notes := fs.String("notes", "", "Markdown file of findings to include after the introduction")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		err = reportCmd(*out, *notes, fs.Args())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "set:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  set run [-config set-sim.yaml] [-json out.json] [-workers n]
  set report [-o docs/results/set.md] [-notes notes.md] results.json...`)
	os.Exit(2)
}
