package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpusched/gpusched/calibrate"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/stats"
)

// cmdProfilePairs measures pairs of different kernels of experiment files
// co-resident on every SM (calibrate.MixedCoResidency): each alone and
// both released at once, with stamps of where their blocks ran.
func cmdProfilePairs(args []string, stdout, stderr io.Writer) (err error) {
	if len(args) > 0 && args[0] == "fit" {
		return cmdProfilePairsFit(args[1:], stdout, stderr)
	}
	fs := newFlags("profile pairs", stderr)
	dev := fs.String("device", experiments.CUDADevice, "the device to measure: cuda, or a simulator config")
	out := fs.String("o", "", "report to write (required), e.g. pairs-h100.json")
	spinShared := fs.String("spin-shared", "", "comma-separated bytes of dynamic shared memory: one more spinner for each (class spinNk), e.g. 20000,70000")
	files, err := parse(fs, args, 1, -1)
	if err != nil {
		return err
	}
	shared, err := parseSpinShared(*spinShared)
	if err != nil {
		return err
	}
	if *out == "" || !strings.HasSuffix(*out, ".json") {
		return usagef("-o FILE.json is required")
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
	source := "gpusched profile pairs --device " + *dev
	if *spinShared != "" {
		source += " --spin-shared " + *spinShared
	}
	rep, err := calibrate.MixedCoResidency(d, progs, source+" "+strings.Join(files, " "), stderr, shared...)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return writePairsTable(stdout, rep)
}

// writePairsTable is the report as a table: per pair, blocks per SM, each
// kernel alone and beside the other (median ns), slowdowns, overlap and
// the residency the stamps show.
func writePairsTable(w io.Writer, rep *calibrate.MixedReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t\t\t\t\t\t\t\t\t\t\t\n", rep.Device)
	fmt.Fprintln(tw, "a\tb\tper SM\talone a ns\talone b ns\tbeside a ns\tbeside b ns\ttogether ns\tslowdown a\tslowdown b\toverlap\tboth on SMs\t")
	for _, p := range rep.Pairs {
		fmt.Fprintf(tw, "%s\t%s\t%d+%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t%.2f\t%d/%d %s\t\n", p.A, p.B, p.PerSM[0], p.PerSM[1],
			stats.MedianOrZero(p.AloneA), stats.MedianOrZero(p.AloneB), stats.MedianOrZero(p.WithA), stats.MedianOrZero(p.WithB),
			stats.MedianOrZero(p.Together), p.Slowdown[0], p.Slowdown[1], p.Overlap, p.Residency.BothSMs, p.Residency.SMs, p.Residency.Source)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(tw, "note: %s\t\t\t\t\t\t\t\t\t\t\t\n", n)
	}
	return tw.Flush()
}

// cmdProfilePairsFit fits sm.younger_kernel_weight (or, with
// --older-pressure, sm.older_pressure_exponent at the config's weight) to
// a measured probe (profile pairs' JSON): the probe of the same experiment
// files simulated on a config (its rate model on) at each of
// calibrate.MixedFitWeights (MixedFitExponents), and the value whose
// slowdowns are closest to the measured ones.
func cmdProfilePairsFit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profile pairs fit", stderr)
	dev := fs.String("device", "", "the simulator config to fit (required; its sm.retime_threshold on)")
	pressure := fs.Bool("older-pressure", false, "fit sm.older_pressure_exponent at the config's sm.younger_kernel_weight instead of the weight")
	spinShared := fs.String("spin-shared", "", "the measured probe's --spin-shared")
	files, err := parse(fs, args, 2, -1)
	if err != nil {
		return err
	}
	shared, err := parseSpinShared(*spinShared)
	if err != nil {
		return err
	}
	if *dev == "" {
		return usagef("--device CONFIG is required")
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		return err
	}
	var gpu calibrate.MixedReport
	if err := json.Unmarshal(b, &gpu); err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	cfg, err := sim.LoadConfig(*dev)
	if err != nil {
		return err
	}
	if cfg.SM.RetimeThreshold <= 0 {
		return usagef("--device %s: sm.retime_threshold is off; the weight acts with the rate model", *dev)
	}
	progs, err := programsOf(files[1:], stderr)
	if err != nil {
		return err
	}
	name, values := "younger_kernel_weight", calibrate.MixedFitWeights
	if *pressure {
		name, values = "older_pressure_exponent", calibrate.MixedFitExponents
	}
	best, fits, err := calibrate.FitMixed(&gpu, values, func(v float64) (rep *calibrate.MixedReport, err error) {
		c := *cfg
		if *pressure {
			c.SM.OlderPressureExponent = v
		} else {
			c.SM.YoungerKernelWeight = v
		}
		d, err := sim.New(&c)
		if err != nil {
			return nil, err
		}
		defer func() { err = errors.Join(err, d.Close()) }()
		return calibrate.MixedCoResidency(d, progs, "fit", nil, shared...)
	})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\trms error of log slowdown\tslowdowns\tnot co-run: rms error\tslowdowns\t\n", name)
	for _, f := range fits {
		fmt.Fprintf(tw, "%g\t%.1f%%\t%d\t%.1f%%\t%d\t\n", f.Value, f.RMSPct, f.Slowdowns, f.SerialRMSPct, f.Serial)
	}
	fmt.Fprintf(tw, "best: %g\t\t\t\t\t\n", best)
	return tw.Flush()
}

// parseSpinShared reads --spin-shared: comma-separated bytes of shared
// memory, each from 1 to 232448 (H100's most a block takes).
func parseSpinShared(v string) ([]int, error) {
	if v == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 232448 {
			return nil, usagef("--spin-shared %q: each entry must be bytes of shared memory from 1 to 232448", f)
		}
		out = append(out, n)
	}
	return out, nil
}
