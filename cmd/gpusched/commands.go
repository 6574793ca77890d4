package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/cuda"
	"github.com/gpusched/gpusched/experiments"
)

// progressTo is the progress bar's writer: stderr when it is a terminal.
func progressTo(stderr io.Writer) io.Writer {
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		return f
	}
	return nil
}

// report prints where results went and turns failed rows into an error.
func report(res *experiments.Results, files []string, stdout, stderr io.Writer) error {
	if len(files) > 0 {
		fmt.Fprintf(stdout, "\nwrote %s\n", summarizeFiles(files))
	}
	failed := res.Failed()
	if len(failed) == 0 {
		return nil
	}
	for _, r := range failed {
		fmt.Fprintf(stderr, "row %s / %s / %s: %s\n", r.Workload, r.Scheduler, r.Device, strings.Join(r.Errors, "; "))
	}
	return fmt.Errorf("%d of %d rows failed", len(failed), len(res.Rows))
}

// summarizeFiles lists the written files, counting plots rather than
// naming each when there are many.
func summarizeFiles(files []string) string {
	var named []string
	svgs, svgDir := 0, ""
	for _, f := range files {
		if strings.HasSuffix(f, ".svg") {
			svgs++
			svgDir = filepath.Dir(f)
			continue
		}
		named = append(named, f)
	}
	switch {
	case svgs > 0 && svgs <= 3:
		for _, f := range files {
			if strings.HasSuffix(f, ".svg") {
				named = append(named, f)
			}
		}
	case svgs > 3:
		named = append(named, fmt.Sprintf("%d SVG plots in %s", svgs, svgDir))
	}
	return strings.Join(named, ", ")
}

func cmdRun(args []string, stdout, stderr io.Writer) error {
	return runExperiment("run", nil, args, stdout, stderr)
}

// runExperiment is gpusched run, and with a paper gpusched paper NAME run:
// the same arguments, table, progress and files.
func runExperiment(name string, paper *experiments.Paper, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(name, stderr)
	out := fs.String("o", "", "results directory (default: the file's outputs.dir, or results/NAME)")
	jobs := fs.Int("j", 0, "simulator rows to run at once (default: one per CPU)")
	timelines := fs.Bool("timelines", false, "write a timeline per row (also outputs.timelines in the file)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	e, err := experiments.LoadExperiment(pos[0])
	if err != nil {
		return err
	}
	dir := e.OutDir()
	if *out != "" {
		dir = *out
	}
	if err := experiments.CheckOutDir(dir); err != nil {
		return err
	}
	opt := experiments.RunOptions{Workers: *jobs, Table: stdout, Progress: progressTo(stderr), Paper: paper, DropSeries: paper != nil}
	if *timelines || e.Outputs.Timelines {
		opt.TimelineDir = filepath.Join(dir, "timelines")
	}
	res, err := experiments.Run(e, opt)
	if err != nil {
		return err
	}
	files, err := experiments.Write(dir, res, e.Formats())
	if err != nil {
		return err
	}
	if opt.TimelineDir != "" {
		files = append(files, opt.TimelineDir+"/")
	}
	return report(res, files, stdout, stderr)
}

func cmdSweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep", stderr)
	var params multiFlag
	fs.Var(&params, "param", "NAME=V1,V2,...: seed, repetitions, workloads.W.P or schedulers.S.P (repeatable; points are the cartesian product)")
	shardFlag := fs.String("shard", "", "I/N: run only shard I (0-based) of N, for array jobs; merge the shards with gpusched merge")
	out := fs.String("o", "", "results directory (default: the file's outputs dir + /sweep, or /shard-I-of-N)")
	jobs := fs.Int("j", 0, "simulator rows to run at once (default: one per CPU)")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if len(params) == 0 {
		return usagef("give at least one --param NAME=V1,V2,...")
	}
	opt := experiments.RunOptions{Workers: *jobs, Table: stdout, Progress: progressTo(stderr)}
	for _, p := range params {
		sp, err := experiments.ParseSweepParam(p)
		if err != nil {
			return usagef("%v", err)
		}
		opt.Sweep = append(opt.Sweep, sp)
	}
	if *shardFlag != "" {
		if opt.Shard, err = experiments.ParseShard(*shardFlag); err != nil {
			return usagef("%v", err)
		}
	}
	e, err := experiments.LoadExperiment(pos[0])
	if err != nil {
		return err
	}
	dir := filepath.Join(e.OutDir(), "sweep")
	formats := e.Formats()
	if *shardFlag != "" {
		dir = filepath.Join(e.OutDir(), fmt.Sprintf("shard-%d-of-%d", opt.Shard.Index, opt.Shard.Count))
		// A shard writes only what merge reads; the merged sweep writes the rest.
		formats = []string{"json"}
	}
	if *out != "" {
		dir = *out
	}
	res, err := experiments.Run(e, opt)
	if err != nil {
		return err
	}
	files, err := experiments.Write(dir, res, formats)
	if err != nil {
		return err
	}
	return report(res, files, stdout, stderr)
}

func cmdMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", stderr)
	out := fs.String("o", "", "directory for the merged results (required)")
	formats := fs.String("formats", "md,csv,json,svg,pdf", "formats to write")
	pos, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o DIR is required")
	}
	var parts []*experiments.Results
	for _, p := range pos {
		r, err := readResultsArg(p)
		if err != nil {
			return err
		}
		parts = append(parts, r)
	}
	merged, err := experiments.Merge(parts)
	if err != nil {
		return err
	}
	files, err := experiments.Write(*out, merged, strings.Split(*formats, ","))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "merged %d parts, %d rows\n", len(parts), len(merged.Rows))
	return report(merged, files, stdout, stderr)
}

func cmdCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", stderr)
	pos, err := parse(fs, args, 2, 2)
	if err != nil {
		return err
	}
	var sets [2]*experiments.Results
	for i, p := range pos {
		if sets[i], err = readResultsArg(p); err != nil {
			return err
		}
	}
	c, err := experiments.Compare(sets[0], sets[1], pos[0], pos[1])
	if err != nil {
		return err
	}
	return c.Print(stdout)
}

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stderr)
	simFlag := fs.String("sim", "", "simulator config (name or path; default: a measured config of the GPU where one exists)")
	gpu := fs.String("gpu", experiments.CUDADevice, "the device to validate against (cuda; a simulator config compares two configs)")
	out := fs.String("o", "", "also write validation.md, validation.json and both result sets here")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	e, err := experiments.LoadExperiment(pos[0])
	if err != nil {
		return err
	}
	simSpec := *simFlag
	if simSpec == "" {
		dev, err := experiments.OpenDevice(*gpu)
		if err != nil {
			return fmt.Errorf("open %s: %w", *gpu, err)
		}
		info := dev.Info()
		dev.Close()
		name, why, err := experiments.PickSimConfig(info)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "validate: simulating %s with config %s (%s)\n", info.Name, name, why)
		simSpec = name
	}
	v, simRes, gpuRes, err := experiments.Validate(e, simSpec, *gpu, experiments.RunOptions{Progress: progressTo(stderr)})
	if err != nil {
		return err
	}
	if err := v.Print(stdout); err != nil {
		return err
	}
	if *out != "" {
		if _, err := experiments.Write(filepath.Join(*out, "gpu"), gpuRes, e.Formats()); err != nil {
			return err
		}
		if _, err := experiments.Write(filepath.Join(*out, "sim"), simRes, e.Formats()); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, "validation.md"), v.Markdown(), 0o644); err != nil {
			return err
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, "validation.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", *out)
	}
	failed := len(gpuRes.Failed()) + len(simRes.Failed())
	if failed > 0 {
		return fmt.Errorf("%d rows failed (see the table)", failed)
	}
	return nil
}

func cmdTrace(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trace", stderr)
	wl := fs.String("workload", "", "workload entry name (required)")
	sc := fs.String("scheduler", "", "scheduler entry name (required)")
	dev := fs.String("device", "", "device (default: the file's first)")
	out := fs.String("o", "", "output file (required; - for stdout); open it in https://ui.perfetto.dev or load it with HTA")
	pos, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *wl == "" || *sc == "" || *out == "" {
		return usagef("--workload, --scheduler and -o are required")
	}
	e, err := experiments.LoadExperiment(pos[0])
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	row, err := experiments.Trace(e, *wl, *sc, *dev, &buf)
	if err != nil {
		return err
	}
	where, note := *out, stdout
	if *out == "-" {
		// The timeline is the output; the note goes beside it, to stderr.
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return err
		}
		where, note = "stdout", stderr
	} else if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	ms := "-"
	if row.Makespan != nil && row.Makespan.N > 0 {
		ms = fmt.Sprintf("%.1f µs", row.Makespan.Median)
	}
	fmt.Fprintf(note, "%s / %s / %s: makespan %s; timeline in %s\n", row.Workload, row.Scheduler, row.Device, ms, where)
	if len(row.Errors) > 0 {
		return fmt.Errorf("%s", strings.Join(row.Errors, "; "))
	}
	return nil
}

func cmdDevices(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", stderr)
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Simulator configs (use by name in an experiment's devices, or give a .yaml path):")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  name\tdevice\tSMs\tclock GHz\tthreads/SM\tregs/SM\tsmem/SM KiB\tmem GB/s\tHW queues\tcopy engines")
	for _, n := range experiments.SimConfigs() {
		info, err := experiments.SimInfo(n)
		if err != nil {
			fmt.Fprintf(tw, "  %s\terror: %v\n", n, err)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%.2f\t%d\t%d\t%d\t%.0f\t%d\t%d\n", n, info.Name, info.SMs, float64(info.ClockHz)/1e9,
			info.MaxThreadsPerSM, info.RegistersPerSM, info.SharedPerSM/1024, info.MemBandwidth/1e9, info.HardwareQueues, info.CopyEngines)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nCUDA devices (an experiment's device cuda is the first):")
	gpus, err := cuda.Devices()
	if err != nil {
		fmt.Fprintf(stdout, "  none: %v\n", err)
		return nil
	}
	if len(gpus) == 0 {
		fmt.Fprintln(stdout, "  none: the driver reports no GPU")
		return nil
	}
	for _, g := range gpus {
		fmt.Fprintf(stdout, "  %d: %s, compute capability %s, %d SMs, %d MiB, driver supports CUDA %s\n",
			g.Ordinal, g.Name, g.ComputeCapability, g.SMs, g.MemoryBytes>>20, g.DriverVersion)
		if name, why, err := experiments.PickSimConfig(device.Info{Name: g.Name, SMs: g.SMs}); err == nil {
			fmt.Fprintf(stdout, "     simulated by config %s (%s)\n", name, why)
		}
	}
	return nil
}

// readResultsArg reads a results file named on the command line: a
// results.json, or a directory holding one.
func readResultsArg(p string) (*experiments.Results, error) {
	return experiments.ReadResults(resultsPath(p))
}

func resultsPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, "results.json")
	}
	return p
}
