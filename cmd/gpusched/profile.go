package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpusched/gpusched/calibrate"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/workloads"
)

// cmdProfile measures the kernels of experiment files (or refits a
// profile's models from its points: profile fit; or measures pairs of
// different kernels co-resident on every SM: profile pairs).
func cmdProfile(args []string, stdout, stderr io.Writer) (err error) {
	if len(args) > 0 && args[0] == "fit" {
		return cmdProfileFit(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "cv" {
		return cmdProfileCV(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "pairs" {
		return cmdProfilePairs(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "load-fit" {
		return cmdProfileLoadFit(args[1:], stdout, stderr)
	}
	fs := newFlags("profile", stderr)
	dev := fs.String("device", experiments.CUDADevice, "the device to measure: cuda, or a simulator config")
	out := fs.String("o", "", "profile to write (required), e.g. h100-profile.yaml")
	budget := fs.Duration("budget", 90*time.Second, "device time after which a kernel's extra sizes are skipped (twice it: everything left)")
	sizes := fs.Int("max-sizes", 24, "most launches of one kernel measured at their own occupancy")
	occs := fs.Int("max-occupancies", 6, "most forced occupancies per swept launch")
	samples := fs.Int("samples", 5, "timed samples per point")
	deadline := fs.Duration("deadline", 0, "wall-clock time from the start after which every point left is skipped (0: none)")
	gateCheck := fs.Bool("gate-check", true, "take a sample again behind a longer gate kernel when the host enqueued it slower than the gate spun (false: keep every sample, to measure what the check changes)")
	coldL2 := fs.Bool("cold-l2", false, "also time each point with the L2 cache evicted before each launch (cold_ns) and the same launch right after (rewarm_ns)")
	bind := fs.Int64("bind-bytes", 4<<30, "most device bytes of programs bound for optional sizes (binding and filling inputs is most of a profile's wall time)")
	files, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	var until time.Time
	if *deadline > 0 {
		until = time.Now().Add(*deadline)
	}
	progs, err := programsOf(files, stderr)
	if err != nil {
		return err
	}
	d, err := experiments.OpenDevice(*dev)
	if err != nil {
		return fmt.Errorf("open %s: %w", *dev, err)
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	opt := calibrate.ProfileOptions{
		Budget: *budget, MaxSizes: *sizes, MaxOccupancies: *occs, Samples: *samples, Deadline: until, BindBytes: *bind, Progress: stderr,
		NoGateCheck: !*gateCheck, ColdL2: *coldL2,
		Source: "gpusched profile --device " + *dev + coldFlag(*coldL2) + " " + strings.Join(files, " "),
	}
	prof, sum, err := calibrate.ProfileKernels(d, progs, opt)
	if err != nil {
		return err
	}
	if err := writeProfile(prof, *out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "profile: %d programs (%.1f GB) bound, %d distinct launches of %d kernels; %d points measured, %d skipped (%d of them optional sizes whose programs did not fit the bind budget); %d samples taken again behind a longer gate; device time %v; wrote %s\n",
		sum.Programs, float64(sum.BoundBytes)/1e9, sum.Distinct, sum.Kernels, sum.Points, sum.Skipped, sum.BindSkipped, sum.Retaken,
		sum.DeviceTime.Round(time.Millisecond), *out)
	return writeFitTable(stdout, prof)
}

// coldFlag is the --cold-l2 flag a profile's source line records, if set.
func coldFlag(on bool) string {
	if on {
		return " --cold-l2"
	}
	return ""
}

// cmdProfileFit refits a profile's models from its points (and the
// points of the profiles after it, added to the first's).
func cmdProfileFit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profile fit", stderr)
	out := fs.String("o", "", "profile to write (required)")
	b2b := fs.Float64("back-to-back", -1, "set the profile's back_to_back_ns before fitting (e.g. calibrate's front_end.back_to_back_ns); -1 keeps it")
	minBlock := fs.Float64("min-block", -1, "set the profile's min_block_ns before fitting; -1 keeps it")
	dispatch := fs.Float64("block-dispatch", -1, "set the profile's block_dispatch_ns before fitting; -1 keeps it")
	l2 := fs.Int64("l2-bytes", -1, "set the profile's l2_bytes (the device's L2 cache) before fitting; -1 keeps it")
	clock := fs.Int64("clock-hz", -1, "set the profile's clock_hz (the device's SM clock) before fitting; -1 keeps it")
	cold := fs.String("cold", "", "a --cold-l2 profile of the same device whose cold samples (cold_ns, rewarm_ns) go onto the matching points, warm samples kept (calibrate.AddColdSamples)")
	files, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("-o FILE is required")
	}
	profs, err := loadProfiles(files)
	if err != nil {
		return err
	}
	prof := profs[0]
	for i, add := range profs[1:] { // later profiles' points added (calibrate.MergeProfiles)
		if prof, err = calibrate.MergeProfiles(prof, add); err != nil {
			return fmt.Errorf("%s: %w", files[1+i], err)
		}
	}
	if *cold != "" {
		add, err := sim.LoadProfile(*cold, "")
		if err != nil {
			return err
		}
		n, err := calibrate.AddColdSamples(prof, add)
		if err != nil {
			return fmt.Errorf("%s: %w", *cold, err)
		}
		fmt.Fprintf(stderr, "profile fit: cold samples on %d points from %s\n", n, *cold)
	}
	if *b2b >= 0 {
		prof.BackToBackNs = *b2b
	}
	if *minBlock >= 0 {
		prof.MinBlockNs = *minBlock
	}
	if *dispatch >= 0 {
		prof.BlockDispatchNs = *dispatch
	}
	if *l2 >= 0 {
		prof.L2Bytes = *l2
	}
	if *clock >= 0 {
		prof.ClockHz = *clock
	}
	if err := calibrate.FitProfile(prof); err != nil {
		return err
	}
	if err := writeProfile(prof, *out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "profile fit: wrote %s\n", *out)
	return writeFitTable(stdout, prof)
}

// loadProfiles loads the profile files, in order.
func loadProfiles(files []string) ([]*sim.Profile, error) {
	profs := make([]*sim.Profile, 0, len(files))
	for _, f := range files {
		p, err := sim.LoadProfile(f, "")
		if err != nil {
			return nil, err
		}
		profs = append(profs, p)
	}
	return profs, nil
}

// cmdProfileCV prints the cross-validated error of a profile's fallback
// (the block model, alone and with its neighbor rule) per kernel.
func cmdProfileCV(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profile cv", stderr)
	folds := fs.Int("folds", 10, "folds the kernel's launch shapes are split into")
	files, err := parse(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if *folds < 2 {
		return usagef("--folds must be at least 2, got %d", *folds)
	}
	prof, err := sim.LoadProfile(files[0], "")
	if err != nil {
		return err
	}
	return writeCVTable(stdout, calibrate.CrossValidate(prof, *folds))
}

// writeCVTable prints each kernel's cross-validated errors and the
// pooled ones (every point of every kernel, weighted alike).
func writeCVTable(w io.Writer, cvs []calibrate.KernelCV) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "kernel\tpoints\tshapes\tmodel mean %%\tmedian %%\tp90 %%\tmax %%\tfallback mean %%\tmedian %%\tp90 %%\tmax %%\tfolds with neighbors\t\n")
	for _, c := range append(cvs, calibrate.PooledCV(cvs)) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t\n", c.Kernel, c.Points, c.Shapes,
			c.Model.Mean, c.Model.Median, c.Model.P90, c.Model.Max, c.Fallback.Mean, c.Fallback.Median, c.Fallback.P90, c.Fallback.Max, c.Neighbors)
	}
	return tw.Flush()
}

// writeProfile writes prof and checks that it loads back.
func writeProfile(prof *sim.Profile, path string) error {
	if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
		return usagef("-o %s: a profile file ends in .yaml", path)
	}
	body, err := prof.Marshal()
	if err != nil {
		return err
	}
	head := "# Kernel profile (device/sim.Profile; docs/SIMULATOR.md): measured block times and\n" +
		"# the block model fitted per kernel. Written by gpusched profile.\n"
	if err := os.WriteFile(path, append([]byte(head), body...), 0o644); err != nil {
		return err
	}
	if _, err := sim.LoadProfile(path, ""); err != nil {
		return fmt.Errorf("the written profile does not load: %w", err)
	}
	return nil
}

// writeFitTable prints each kernel's points and fit error.
func writeFitTable(w io.Writer, prof *sim.Profile) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cold := slices.ContainsFunc(prof.Kernels, func(k sim.KernelProfile) bool { return k.Fit.ColdPoints > 0 })
	coldHead, coldPad := "", ""
	if cold { // the cold term's columns only where the profile has cold points (--cold-l2)
		coldHead, coldPad = "cold points\tcold ns/B\tcold median %\tcold max %\t", "\t\t\t\t"
	}
	fmt.Fprintf(tw, "kernel\tpoints\tmedian err %%\tmax err %%\tGPU spread %%\tcurve points\tneighbors\tleft-out median %%\tmax %%\t%s\n", coldHead)
	for _, k := range prof.Kernels {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%d\t%d\t%.1f\t%.1f\t", k.Kernel, k.Fit.Points, k.Fit.MedianPct, k.Fit.MaxPct, k.Fit.SpreadPct,
			len(k.Model.CoResidency), k.Model.Neighbors, k.Fit.CVMedianPct, k.Fit.CVMaxPct)
		if cold {
			fmt.Fprintf(tw, "%d\t%.4g\t%.1f\t%.1f\t", k.Fit.ColdPoints, k.Model.ColdNsPerByte, k.Fit.ColdMedianPct, k.Fit.ColdMaxPct)
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintf(tw, "back-to-back %.0f ns, shortest block %.0f ns, block dispatch %.3g ns, default warp slope %.4f\t\t\t\t\t\t\t\t\t%s\n",
		prof.BackToBackNs, prof.MinBlockNs, prof.BlockDispatchNs, prof.DefaultWarpSlope, coldPad)
	return tw.Flush()
}

// programsOf builds the workloads of experiment files, each distinct one
// (family, parameters, seed) once.
func programsOf(files []string, stderr io.Writer) ([]*workloads.Program, error) {
	seen := map[string]bool{}
	var progs []*workloads.Program
	for _, f := range files {
		e, err := experiments.LoadExperiment(f)
		if err != nil {
			return nil, err
		}
		for _, w := range e.Workloads {
			params, err := yaml.Marshal(&w.Params)
			if err != nil {
				return nil, err
			}
			key := fmt.Sprintf("%s\x00%s\x00%d", w.Family, params, e.Seed)
			if seen[key] {
				continue
			}
			seen[key] = true
			p, err := experiments.NewWorkload(w.Family, &w.Params, e.Seed)
			if err != nil {
				return nil, fmt.Errorf("%s: workload %s: %w", f, w.Name, err)
			}
			progs = append(progs, p)
		}
	}
	fmt.Fprintf(stderr, "profile: %d distinct workloads in %d files\n", len(progs), len(files))
	return progs, nil
}
