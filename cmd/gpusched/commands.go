package main

import (
	"bytes"
	"errors"
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
	if s, ok := stderr.(*stickyWriter); ok {
		stderr = s.w
	}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		return f
	}
	return nil
}

// report prints where results went and turns failed rows into an error.
func report(res *experiments.Results, files []string, stdout, stderr io.Writer) error {
	if len(files) > 0 {
		if _, err := fmt.Fprintf(stdout, "\nwrote %s\n", summarizeFiles(files)); err != nil {
			return err
		}
	}
	failed := res.Failed()
	if len(failed) == 0 {
		return nil
	}
	var b strings.Builder
	for _, r := range failed {
		fmt.Fprintf(&b, "row %s / %s / %s: %s\n", r.Workload, r.Scheduler, r.Device, strings.Join(r.Errors, "; "))
	}
	_, err := io.WriteString(stderr, b.String())
	return errors.Join(fmt.Errorf("%d of %d rows failed", len(failed), len(res.Rows)), err)
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
		r, err := readResultsArg(p, stderr)
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
		if sets[i], err = readResultsArg(p, stderr); err != nil {
			return err
		}
	}
	for _, m := range experiments.ConfigMismatches(sets[0], sets[1]) {
		fmt.Fprintf(stderr, "gpusched: warning: %s and %s: %s\n", pos[0], pos[1], m)
	}
	c, err := experiments.Compare(sets[0], sets[1], pos[0], pos[1])
	if err != nil {
		return err
	}
	return c.Print(stdout)
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
// results.json, or a directory holding one. It warns on stderr of every
// simulator config that is no longer the one the rows were made with.
func readResultsArg(p string, stderr io.Writer) (*experiments.Results, error) {
	p = resultsPath(p)
	r, err := experiments.ReadResults(p)
	if err != nil {
		return nil, err
	}
	for _, c := range r.ConfigChanges() {
		fmt.Fprintf(stderr, "gpusched: warning: %s: %s\n", p, c)
	}
	return r, nil
}

func resultsPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, "results.json")
	}
	return p
}
