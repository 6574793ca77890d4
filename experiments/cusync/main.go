// Command cusync reproduces cuSync's headline comparison (Jangda et al.,
// CGO 2024; the cuSync section of REFERENCES.md): the GPT-3 and LLaMA-65B
// MLPs and the ResNet-38 and VGG-19 convolution pairs of workloads/tiles,
// under stream synchronization and under each tile-synchronization policy
// of sched/tilesync, on the simulator and on a GPU, plus the deadlock that
// spinning consumers hit without cuSync's wait kernel.
//
//	go run ./experiments/cusync run -config configs/experiments/cusync-sim.yaml -json docs/results/cusync-sim.json
//	go run -tags cuda ./experiments/cusync run -config configs/experiments/cusync-gpu.yaml -json docs/results/cusync-gpu.json
//	go run ./experiments/cusync report -o docs/results/cusync.md docs/results/cusync-sim.json [docs/results/cusync-gpu.json]
//
// run binds each (workload, device) once. On the simulator it then times
// each scheduler's warm-up and measured runs back to back (tile counters
// carry run numbers, so runs follow each other without resets). On a GPU
// it prepares every scheduler and measures them interleaved, in rounds of
// one run each in rotating order, so that drift over the run falls on all
// alike and run i of a scheduler pairs with run i of stream-sync (the
// report's paired speedups and their 95% intervals); then each scheduler
// runs once more from poisoned outputs, which are checked against the CPU
// reference and hashed, so the report can show that every policy computes
// the stream-sync result bit for bit. On the simulator it also reproduces the deadlock. The host
// given to the schedulers implements device.InfoHost, so policy auto
// applies the wave-count rule.
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
		config := fs.String("config", "configs/experiments/cusync-sim.yaml", "experiment file")
		out := fs.String("json", "", "write the raw results here (default: stdout)")
		workers := fs.Int("workers", 0, "simulator rows run at once (0: GOMAXPROCS)")
		fs.Parse(os.Args[2:])
		err = runCmd(*config, *out, *workers)
	case "report":
		fs := flag.NewFlagSet("report", flag.ExitOnError)
		out := fs.String("o", "docs/results/cusync.md", "Markdown file to write")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		err = reportCmd(*out, fs.Args())
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cusync:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage:
  cusync run [-config cusync-sim.yaml] [-json out.json] [-workers n]
  cusync report [-o docs/results/cusync.md] results.json...`)
	os.Exit(2)
}
