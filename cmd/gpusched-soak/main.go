// Command gpusched-soak pushes many small kernels through each scheduler on
// one device and reports whether anything grows that must not: streams,
// events, graphs and graph execs the scheduler holds, device allocations,
// the device's free memory (cuMemGetInfo, in a binary built with -tags cuda)
// and the process's Go heap and resident set. See hardening.Soak for the
// method.
//
//	go build -tags cuda -o bin/gpusched-soak ./cmd/gpusched-soak
//	bin/gpusched-soak -device cuda -kernels 1000000 -budget 20s -out soak.md
//
// -device names a simulator config (h100, ...) or "cuda". Each scheduler
// stops at -kernels kernels or after -budget of wall time, whichever comes
// first; the report says how many kernels each one issued. The exit status
// is 1 if any scheduler failed or grew.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gpusched/gpusched/device"
	"github.com/gpusched/gpusched/device/sim"
	"github.com/gpusched/gpusched/experiments"
	"github.com/gpusched/gpusched/internal/hardening"
)

func main() {
	dev := flag.String("device", "cuda", `"cuda" or a simulator config name or path`)
	kernels := flag.Int("kernels", 1_000_000, "kernels per scheduler")
	budget := flag.Duration("budget", 20*time.Second, "wall time per scheduler (0: none)")
	samples := flag.Int("samples", 10, "samples per scheduler")
	only := flag.String("only", "", "comma-separated scheduler kinds to soak (default: all)")
	out := flag.String("out", "soak.md", "report file (Markdown with the samples as JSON)")
	flag.Parse()
	if err := run(*dev, *kernels, *budget, *samples, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gpusched-soak:", err)
		os.Exit(1)
	}
}

func run(dev string, kernels int, budget time.Duration, samples int, only, out string) (err error) {
	if kernels < 1 || samples < 2 {
		return fmt.Errorf("-kernels must be at least 1 and -samples at least 2")
	}
	var d device.Device
	if dev == experiments.CUDADevice {
		d, err = experiments.OpenDevice(dev)
	} else {
		// The race checker keeps a record of every command of a Run; a
		// soak is one long Run, so that record would be the growth seen.
		d, err = sim.NewNamed(dev, sim.WithRaceCheck(false))
	}
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	cases := hardening.SoakCases
	if only != "" {
		want := map[string]bool{}
		for _, k := range strings.Split(only, ",") {
			want[strings.TrimSpace(k)] = true
		}
		var keep []hardening.SoakCase
		for _, c := range cases {
			if want[c.Scheduler.Kind] {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("-only %q names no scheduler of the soak", only)
		}
		cases = keep
	}
	opt := hardening.SoakOptions{Kernels: kernels, Budget: budget, Samples: samples, Seed: 1,
		Log: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}
	if dev == experiments.CUDADevice {
		opt.MemInfo = memInfo
	}
	rs := hardening.Soak(d, cases, opt)
	name := dev
	if info := d.Info(); info.Name != "" {
		name = fmt.Sprintf("%s (%s)", dev, info.Name)
	}
	if err := os.WriteFile(out, hardening.SoakReport(name, opt, rs), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	var bad []string
	for _, r := range rs {
		if r.Err != "" || len(r.Growth) > 0 {
			bad = append(bad, r.Scheduler)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("failed or grew: %s", strings.Join(bad, ", "))
	}
	return nil
}
