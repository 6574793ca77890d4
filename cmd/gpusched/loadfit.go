package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/gpusched/gpusched/calibrate"
)

// cmdProfileLoadFit fits sm.load_bandwidth (device/sim/memload.go): BASE
// is the device's profile (its kernels' block models), each RUN a profile
// of launches of those kernels at several block counts
// (configs/experiments/corun-blocks-gpu.yaml). It prints every
// candidate's error, the best, and each launch's error with the model off
// and at the best.
func cmdProfileLoadFit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("profile load-fit", stderr)
	files, err := parse(fs, args, 2, -1)
	if err != nil {
		return err
	}
	profs, err := loadProfiles(files)
	if err != nil {
		return err
	}
	groups, err := calibrate.LoadGroups(profs[0], profs[1:], files[1:])
	if err != nil {
		return err
	}
	best, fits := calibrate.FitLoadBandwidth(groups)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "load_bandwidth B/s\trms error\tmax error\tlaunches\t\n")
	for _, f := range fits {
		fmt.Fprintf(tw, "%g\t%.1f%%\t%.1f%%\t%d\t\n", f.Bandwidth, f.RMSPct, f.MaxPct, f.Launches)
	}
	fmt.Fprintf(tw, "best: %g\t%.1f%%\t%.1f%%\t%d\t\n", best.Bandwidth, best.RMSPct, best.MaxPct, best.Launches)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "run\tkernel\tblocks\tbyte share\tdemand GB/s\tmeasured us\terror off\terror at best\t\n")
	for i := range groups {
		g := &groups[i]
		off, at := g.Errors(0), g.Errors(best.Bandwidth)
		for j := range g.Grids {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.0f\t%.1f\t%+.1f%%\t%+.1f%%\t\n", g.Run, g.Kernel, g.Grids[j], g.Share,
				g.Demand[j], g.MeasuredNs[j]/1e3, 100*math.Expm1(off[j]), 100*math.Expm1(at[j]))
		}
	}
	return tw.Flush()
}
